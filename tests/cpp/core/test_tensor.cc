#include <gtest/gtest.h>

#include "core/blob.h"
#include "core/flags.h"
#include "core/tensor.h"

C2_DECLARE_bool(caffe2_keep_on_shrink);
C2_DECLARE_int64(caffe2_max_keep_on_shrink_memory);

namespace caffe2 {

TEST(Tensor, StartsUninitializedAndAllocatesLazily) {
  Tensor t;
  EXPECT_FALSE(t.initialized());
  EXPECT_EQ(t.numel(), 0);
  t.Resize(2, 3);
  EXPECT_TRUE(t.initialized());
  EXPECT_EQ(t.numel(), 6);
  EXPECT_FALSE(t.has_storage());
  float* data = t.mutable_data<float>();
  ASSERT_NE(data, nullptr);
  EXPECT_TRUE(t.has_storage());
  EXPECT_EQ(t.nbytes(), 6 * sizeof(float));
  EXPECT_EQ(t.dim(-1), 3);
  EXPECT_THROW(t.dim(2), EnforceNotMet);
}

TEST(Tensor, ZeroDimIsAScalar) {
  Tensor t;
  t.Resize(std::vector<int64_t>{});
  EXPECT_EQ(t.numel(), 1);
  *t.mutable_data<int64_t>() = 7;
  EXPECT_EQ(t.data<int64_t>()[0], 7);
}

TEST(Tensor, KeepsCapacityOnShrinkAndReallocatesOnGrow) {
  Tensor t;
  t.Resize(100);
  float* big = t.mutable_data<float>();
  t.Resize(10);
  EXPECT_EQ(t.mutable_data<float>(), big);
  EXPECT_EQ(t.capacity_nbytes(), 100 * sizeof(float));
  t.Resize(1000);
  EXPECT_FALSE(t.has_storage());
  t.mutable_data<float>();
  EXPECT_EQ(t.capacity_nbytes(), 1000 * sizeof(float));
}

TEST(Tensor, ShrinkFreesWhenKeepOnShrinkIsOff) {
  FLAGS_caffe2_keep_on_shrink = false;
  Tensor t;
  t.Resize(100);
  t.mutable_data<float>();
  t.Resize(10);
  EXPECT_FALSE(t.has_storage());
  FLAGS_caffe2_keep_on_shrink = true;
  FLAGS_caffe2_max_keep_on_shrink_memory = 16;
  t.Resize(100);
  t.mutable_data<float>();
  t.Resize(10);  // 360 bytes of slack > 16
  EXPECT_FALSE(t.has_storage());
  FLAGS_caffe2_max_keep_on_shrink_memory = INT64_MAX;
}

TEST(Tensor, TypeChangeReallocates) {
  Tensor t;
  t.Resize(4);
  t.mutable_data<float>();
  EXPECT_TRUE(t.IsType<float>());
  t.mutable_data<int64_t>();
  EXPECT_TRUE(t.IsType<int64_t>());
  EXPECT_EQ(t.nbytes(), 32u);
  EXPECT_THROW(t.data<float>(), EnforceNotMet);
}

TEST(Tensor, ShareDataAliasesStorage) {
  Tensor a, b;
  a.Resize(3);
  float* p = a.mutable_data<float>();
  p[0] = 1.f;
  b.ShareData(a);
  EXPECT_EQ(b.data<float>(), p);
  b.mutable_data<float>()[1] = 5.f;
  EXPECT_EQ(a.data<float>()[1], 5.f);
}

TEST(Tensor, CopyFromIsDeepAndHandlesStrings) {
  Tensor a, b;
  a.Resize(2);
  auto* s = a.mutable_data<std::string>();
  s[0] = "x";
  s[1] = "yz";
  b.CopyFrom(a);
  s[0] = "changed";
  EXPECT_EQ(b.data<std::string>()[0], "x");
  EXPECT_EQ(b.data<std::string>()[1], "yz");
}

TEST(Tensor, ReshapeKeepsCountAndInfersOneDim) {
  Tensor t;
  t.Resize(2, 6);
  t.mutable_data<float>();
  t.Reshape({3, -1});
  EXPECT_EQ(t.dims(), (std::vector<int64_t>{3, 4}));
  EXPECT_THROW(t.Reshape({5, 5}), EnforceNotMet);
  EXPECT_THROW(t.Reshape({-1, -1}), EnforceNotMet);
}

TEST(Tensor, NegativeDimIsRejected) {
  Tensor t;
  EXPECT_THROW(t.Resize(std::vector<int64_t>{2, -1}), EnforceNotMet);
}

TEST(Tensor, ReadingUnwrittenDataIsAnError) {
  Tensor t;
  t.Resize(3);
  EXPECT_THROW(t.raw_data(), EnforceNotMet);
}

TEST(Tensor, CudaWithoutBackendGivesClearError) {
  Tensor t(Device{kCUDA, 0});
  t.Resize(4);
  try {
    t.mutable_data<float>();
    SUCCEED() << "a CUDA backend is linked";
  } catch (const EnforceNotMet& e) {
    EXPECT_NE(std::string(e.what()).find("CUDA"), std::string::npos) << e.what();
  }
}

TEST(Blob, GetChecksTypeAndGetMutableReplaces) {
  Blob blob;
  EXPECT_TRUE(blob.IsEmpty());
  EXPECT_EQ(blob.TypeName(), "nullptr (uninitialized)");
  *blob.GetMutable<int>() = 3;
  EXPECT_EQ(blob.Get<int>(), 3);
  try {
    blob.Get<std::string>();
    FAIL();
  } catch (const EnforceNotMet& e) {
    EXPECT_NE(std::string(e.what()).find("Blob contains int while caller expects"),
              std::string::npos)
        << e.what();
  }
  blob.GetMutable<std::string>()->assign("s");
  EXPECT_TRUE(blob.IsType<std::string>());
}

TEST(Blob, GetMutableTensorKeepsTensorOnSameDeviceType) {
  Blob blob;
  Tensor* t = blob.GetMutableTensor(Device{kCPU, 0});
  t->Resize(2);
  t->mutable_data<float>();
  EXPECT_EQ(blob.GetMutableTensor(Device{kCPU, 0}), t);
  EXPECT_TRUE(t->has_storage());
}

}  // namespace caffe2

namespace caffe2 {
namespace {

TEST(CheckedSizes, ElementCountsNeverWrap) {
  EXPECT_EQ(CheckedNumel({}), 1);
  EXPECT_EQ(CheckedNumel({3, 0, 5}), 0);
  EXPECT_EQ(CheckedNumel({int64_t{1} << 31, int64_t{1} << 31}), int64_t{1} << 62);
  EXPECT_THROW(CheckedNumel({3, INT64_MAX}), EnforceNotMet);
  EXPECT_THROW(CheckedNumel({int64_t{1} << 32, int64_t{1} << 32}), EnforceNotMet);
  // Even an empty tensor may not have a product of nonzero dims past int64: its partial products
  // (size_to_dim) would wrap.
  EXPECT_THROW(CheckedNumel({int64_t{1} << 40, int64_t{1} << 40, 0}), EnforceNotMet);
  EXPECT_THROW(CheckedNumel({2, -1}), EnforceNotMet);
}

TEST(CheckedSizes, ByteCountsFitOneAllocation) {
  const TypeMeta f = TypeMeta::Make<float>();
  EXPECT_EQ(CheckedBytes({2, 3}, 6, f), 24u);
  try {
    CheckedBytes({int64_t{1} << 31, int64_t{1} << 31}, int64_t{1} << 62, f);
    FAIL() << "expected an error";
  } catch (const EnforceNotMet& e) {
    EXPECT_NE(std::string(e.what()).find("(2147483648, 2147483648)"), std::string::npos)
        << e.what();
  }
}

TEST(CheckedSizes, TensorsRefuseWhatTheyCannotHold) {
  Tensor t;
  EXPECT_THROW(t.Resize(std::vector<int64_t>{3, INT64_MAX}), EnforceNotMet);
  t.Resize(
      std::vector<int64_t>{int64_t{1} << 31, int64_t{1} << 31});  // dims only: allocation is lazy
  EXPECT_THROW(t.mutable_data<float>(), EnforceNotMet);
  t.Resize(2, 3);  // still usable
  EXPECT_NE(t.mutable_data<float>(), nullptr);
  EXPECT_THROW(t.Reshape({INT64_MAX, 2}), EnforceNotMet);
}

}  // namespace
}  // namespace caffe2
