// The fixed rule of the CPU convolution (operators/conv/conv_policy.h) on the benchmark models'
// cases, its fallbacks when oneDNN offers fewer variants, and the names recorded in the autotune
// cache.
#include <gtest/gtest.h>

#include <vector>

#include "core/argument.h"
#include "operators/conv/conv_policy.h"

namespace caffe2 {
namespace {

// The ConvShape of NCHW X (n, c, h, h) and a (m, c / group, k, k) filter.
ConvShape Shape(int64_t n, int64_t c, int64_t h, int64_t m, int k, int stride, int pad,
                int group = 1) {
  OperatorDef def;
  def.set_type("Conv");
  *def.add_arg() = MakeArgument<int>("kernel", k);
  *def.add_arg() = MakeArgument<int>("stride", stride);
  *def.add_arg() = MakeArgument<int>("pad", pad);
  *def.add_arg() = MakeArgument<int>("group", group);
  return CheckConvShapes(ConvPoolArgs(ArgumentHelper(def)), {n, c, h, h}, {m, c / group, k, k});
}

const ConvOffer kAll{true, true, true};
const ConvOffer kNoWinograd{true, true, false};
const ConvOffer kNone{false, false, false};

std::string Forward(const ConvShape& s, const ConvOffer& offer = kAll) {
  return ConvVariantName(ConvForwardRule(s, offer));
}
std::string Backward(const ConvShape& s, const ConvOffer& offer = kAll, bool dx = true) {
  return ConvBackwardChoiceName(ConvBackwardRule(s, offer, offer, dx), dx);
}

TEST(ConvPolicy, LeNet) {
  EXPECT_EQ(Forward(Shape(64, 1, 28, 20, 5, 1, 0)), "gemm");
  EXPECT_EQ(Forward(Shape(64, 20, 12, 50, 5, 1, 0)), "gemm");
  EXPECT_EQ(Backward(Shape(64, 1, 28, 20, 5, 1, 0)), "gemm");
  EXPECT_EQ(Backward(Shape(64, 20, 12, 50, 5, 1, 0)), "gemm");
}

TEST(ConvPolicy, ResNet20) {
  EXPECT_EQ(Forward(Shape(128, 1, 28, 16, 3, 1, 1)), "gemm");
  EXPECT_EQ(Forward(Shape(128, 16, 28, 16, 3, 1, 1)), "winograd");
  EXPECT_EQ(Forward(Shape(128, 16, 28, 32, 3, 2, 1)), "blocked");
  EXPECT_EQ(Forward(Shape(128, 16, 28, 32, 1, 2, 0)), "gemm");
  EXPECT_EQ(Backward(Shape(128, 16, 28, 16, 3, 1, 1)), "winograd+winograd");
  EXPECT_EQ(Backward(Shape(128, 16, 28, 32, 3, 2, 1)), "blocked+blocked");
  EXPECT_EQ(Backward(Shape(128, 16, 28, 32, 1, 2, 0)), "gemm");
  EXPECT_EQ(Backward(Shape(128, 1, 28, 16, 3, 1, 1)), "gemm");
}

TEST(ConvPolicy, ResNet50) {
  EXPECT_EQ(Forward(Shape(32, 3, 224, 64, 7, 2, 3)), "gemm");
  EXPECT_EQ(Backward(Shape(32, 3, 224, 64, 7, 2, 3)), "direct+direct");
  EXPECT_EQ(Forward(Shape(32, 64, 55, 64, 3, 1, 1)), "winograd");
  EXPECT_EQ(Forward(Shape(32, 128, 55, 128, 3, 2, 1)), "gemm");
  EXPECT_EQ(Forward(Shape(32, 256, 55, 64, 1, 1, 0)), "gemm");
  EXPECT_EQ(Backward(Shape(32, 256, 55, 64, 1, 1, 0)), "direct+direct");
  EXPECT_EQ(Backward(Shape(32, 128, 55, 128, 3, 2, 1)), "direct+direct");
  EXPECT_EQ(Backward(Shape(32, 512, 7, 512, 3, 1, 1)), "winograd+winograd");
}

TEST(ConvPolicy, FallsBackAlongTheOrderWhenOneDnnOffersLess) {
  const ConvShape s = Shape(8, 32, 14, 32, 3, 1, 1);
  EXPECT_EQ(Forward(s, kNoWinograd), "blocked");
  EXPECT_EQ(Backward(s, kNoWinograd), "blocked+blocked");
  EXPECT_EQ(Forward(s, ConvOffer{true, false, false}), "gemm");  // winograd, then blocked only
  EXPECT_EQ(Forward(s, kNone), "gemm");
  EXPECT_EQ(Backward(s, kNone), "gemm");
  // A oneDNN variant for the weights pass alone is not enough: both passes or neither.
  EXPECT_EQ(ConvBackwardChoiceName(ConvBackwardRule(s, kAll, kNone, true), true), "gemm");
  EXPECT_EQ(ConvBackwardChoiceName(ConvBackwardRule(s, kAll, kNone, false), false),
            "winograd+none");
}

TEST(ConvPolicy, GroupsCountChannelsPerGroup) {
  EXPECT_EQ(Forward(Shape(8, 32, 14, 32, 3, 1, 1, /*group=*/32)), "gemm");  // depthwise
  EXPECT_EQ(Forward(Shape(8, 64, 14, 64, 3, 1, 1, /*group=*/2)), "winograd");
}

TEST(ConvPolicy, NamesRoundTrip) {
  for (ConvVariant v :
       {ConvVariant::kGemm, ConvVariant::kDirect, ConvVariant::kBlocked, ConvVariant::kWinograd}) {
    EXPECT_EQ(ParseConvVariant(ConvVariantName(v)).value(), v);
  }
  EXPECT_FALSE(ParseConvVariant("fast").has_value());
  const auto c = ParseConvBackwardChoice("blocked+winograd", true);
  ASSERT_TRUE(c.has_value());
  EXPECT_EQ(c->weights, ConvVariant::kBlocked);
  EXPECT_EQ(c->data, ConvVariant::kWinograd);
  EXPECT_EQ(ConvBackwardChoiceName(*c, true), "blocked+winograd");
  EXPECT_EQ(ParseConvBackwardChoice("gemm", false)->weights, ConvVariant::kGemm);
  EXPECT_EQ(ConvBackwardChoiceName(*ParseConvBackwardChoice("direct+none", false), false),
            "direct+none");
  for (const char* bad : {"", "gemm+gemm", "blocked", "blocked+none", "blocked+gemm", "x+y"}) {
    EXPECT_FALSE(ParseConvBackwardChoice(bad, true).has_value()) << bad;
  }
  EXPECT_FALSE(ParseConvBackwardChoice("blocked+blocked", false).has_value());
}

}  // namespace
}  // namespace caffe2
