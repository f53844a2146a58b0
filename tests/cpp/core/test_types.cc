#include <gtest/gtest.h>

#include <cmath>

#include "core/enforce.h"
#include "core/types.h"

namespace caffe2 {

TEST(Types, DataTypeValuesMatchTheProto) {
  EXPECT_EQ(static_cast<int>(DataType::FLOAT16), 12);
  EXPECT_EQ(static_cast<int>(DataType::DOUBLE), 13);
  EXPECT_EQ(TypeMeta::FromDataType(DataType::BYTE), TypeMeta::Make<uint8_t>());
  EXPECT_EQ(TypeMeta::Make<int64_t>().id, DataType::INT64);
  EXPECT_THROW(TypeMeta::FromDataType(11), EnforceNotMet);
  EXPECT_THROW(TypeMeta::FromDataType(DataType::UNDEFINED), EnforceNotMet);
}

TEST(Types, HalfRoundTripsRepresentableValues) {
  for (float f :
       {0.f, -0.f, 1.f, -2.5f, 65504.f, 6.1035156e-05f, 5.9604645e-08f, 0.333251953125f}) {
    EXPECT_EQ(HalfToFloat(FloatToHalf(f)), f) << f;
  }
  EXPECT_TRUE(std::isinf(HalfToFloat(FloatToHalf(1e6f))));
  EXPECT_TRUE(std::isnan(HalfToFloat(FloatToHalf(NAN))));
  EXPECT_EQ(FloatToHalf(1.f).x, 0x3c00);
  // Round to nearest even: 1 + 2^-11 lies halfway between 1 and 1 + 2^-10.
  EXPECT_EQ(FloatToHalf(1.f + 1.f / 2048).x, 0x3c00);
  EXPECT_EQ(FloatToHalf(1.f + 3.f / 2048).x, 0x3c02);
}

}  // namespace caffe2

#include "core/context.h"

namespace caffe2 {

TEST(CPUContext, SeededGeneratorsRepeatAndUnseededDiffer) {
  DeviceOption seeded;
  seeded.set_random_seed(1234);
  CPUContext a(seeded), b(seeded);
  for (int i = 0; i < 5; ++i) EXPECT_EQ(a.RandGenerator()(), b.RandGenerator()());
  EXPECT_EQ(a.seed(), 1234u);
  CPUContext c, d;
  EXPECT_NE(c.seed(), d.seed());
}

}  // namespace caffe2
