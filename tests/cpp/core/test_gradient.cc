#include <gtest/gtest.h>

#include "core/gradient.h"
#include "test_helpers.h"

namespace caffe2 {
using testing::Op;

std::vector<GradientWrapper> Dense(const std::vector<std::string>& names) {
  std::vector<GradientWrapper> out(names.size());
  for (size_t i = 0; i < names.size(); ++i) out[i].dense_ = names[i];
  return out;
}

TEST(Gradient, SumPassesTheOutputGradientToEveryInput) {
  auto meta = GetGradientForOp(Op("Sum", {"a", "b"}, {"c"}), Dense({"c_grad"}));
  EXPECT_TRUE(meta.ops_.empty());
  ASSERT_EQ(meta.g_input_.size(), 2u);
  EXPECT_EQ(meta.g_input_[0].dense_, "c_grad");
  EXPECT_EQ(meta.g_input_[1].dense_, "c_grad");
}

TEST(Gradient, CopyEmitsCopyOnDeviceLikeWithForwardDeviceEngineAndArgs) {
  OperatorDef fwd = Op("Copy", {"x"}, {"y"}, {MakeArgument<int64_t>("foo", 3)});
  fwd.mutable_device_option()->set_device_type(0);
  fwd.mutable_device_option()->set_cuda_gpu_id(2);
  fwd.set_engine("CUDNN");
  auto meta = GetGradientForOp(fwd, Dense({"y_grad"}));
  ASSERT_EQ(meta.ops_.size(), 1u);
  const OperatorDef& g = meta.ops_[0];
  EXPECT_EQ(g.type(), "CopyOnDeviceLike");
  EXPECT_EQ(std::vector<std::string>(g.input().begin(), g.input().end()),
            (std::vector<std::string>{"y_grad", "x"}));
  EXPECT_EQ(g.output(0), "x_grad");
  EXPECT_TRUE(g.is_gradient_op());
  EXPECT_TRUE(g.has_name());
  EXPECT_EQ(g.device_option().cuda_gpu_id(), 2);
  EXPECT_EQ(g.engine(), "CUDNN");
  ASSERT_EQ(g.arg_size(), 1);
  EXPECT_EQ(g.arg(0).name(), "foo");
  EXPECT_EQ(meta.g_input_[0].dense_, "x_grad");
}

TEST(Gradient, NoGradientAndShouldNotDoGradient) {
  auto meta = GetGradientForOp(Op("StopGradient", {"x"}, {"y"}), Dense({"y_grad"}));
  EXPECT_TRUE(meta.ops_.empty());
  EXPECT_TRUE(meta.g_input_[0].IsEmpty());
  EXPECT_NO_THROW(GetGradientForOp(Op("Print", {"x"}, {}), {}));  // no outputs, no gradient asked
  GradientWrapper empty;
  EXPECT_NO_THROW(GetGradientForOp(Op("CopyOnDeviceLike", {"a", "b"}, {"c"}), {empty}));
  EXPECT_THROW(GetGradientForOp(Op("CopyOnDeviceLike", {"a", "b"}, {"c"}), Dense({"c_grad"})),
               EnforceNotMet);
}

TEST(Gradient, UnregisteredTypeThrows) {
  EXPECT_FALSE(GradientRegistry::Has("NoSuchOperator"));
  EXPECT_THROW(GetGradientForOp(Op("NoSuchOperator", {"x"}, {"y"}), Dense({"y_grad"})),
               EnforceNotMet);
}

TEST(Gradient, CreateOperatorDefPresenceRules) {
  OperatorDef d = CreateOperatorDef("T", "", {"a"}, {"b"});
  EXPECT_TRUE(d.has_name());
  EXPECT_FALSE(d.has_device_option());
  EXPECT_FALSE(d.has_engine());
}

}  // namespace caffe2
