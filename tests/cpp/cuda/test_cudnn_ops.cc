// The cuDNN operators: their registrations (checked without a GPU) and the Conv algorithm cache per
// shape (GPU only; the numerics are checked against the CPU kernels in tests/python/operators).
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "core/cuda/cuda_context.h"
#include "core/argument.h"
#include "core/gradient.h"
#include "core/operator.h"
#include "core/workspace.h"
#include "operators/conv/conv_op_cudnn.h"
#include "operators/conv/conv_pool_op_base.h"

namespace caffe2 {
namespace {

void FeedGpu(Workspace* ws, const std::string& name, const std::vector<int64_t>& dims) {
  Tensor host(dims, Device{kCPU, 0});
  float* p = host.mutable_data<float>();
  for (int64_t i = 0; i < host.numel(); ++i) p[i] = static_cast<float>((i * 7) % 11) / 11.f - 0.5f;
  ws->CreateBlob(name)->GetMutableTensor(Device{kCUDA, 0})->CopyFrom(host);
}

OperatorDef OnGpu(OperatorDef def) {
  def.mutable_device_option()->set_device_type(kCUDA);
  def.mutable_device_option()->set_cuda_gpu_id(0);
  def.set_engine("CUDNN");
  return def;
}

}  // namespace

TEST(CudnnOps, AreRegisteredPlainAndUnderTheCudnnEngine) {
  for (const char* type : {"Conv", "Conv1D", "Conv2D", "Conv3D", "MaxPool", "MaxPool1D",
                           "MaxPool2D", "MaxPool3D", "AveragePool", "AveragePool1D",
                           "AveragePool2D", "AveragePool3D", "SpatialBN", "Softmax", "LRN"}) {
    for (const std::string& key : {std::string(type), std::string(type) + "Gradient"}) {
      EXPECT_NE(OperatorRegistry::Find(kCUDA, key), nullptr) << key;
      EXPECT_NE(OperatorRegistry::Find(kCUDA, key + "_ENGINE_CUDNN"), nullptr) << key;
    }
  }
  for (const char* key : {"Relu_ENGINE_CUDNN", "ReluGradient_ENGINE_CUDNN", "Sigmoid_ENGINE_CUDNN",
                          "SigmoidGradient_ENGINE_CUDNN", "Tanh_ENGINE_CUDNN",
                          "TanhGradient_ENGINE_CUDNN", "Dropout", "DropoutGrad"}) {
    EXPECT_NE(OperatorRegistry::Find(kCUDA, key), nullptr) << key;
  }
}

// Which geometries the cuDNN conv and pool ops can run (symmetric pads only) and which go to the
// CPU.
bool Fits(const std::vector<Argument>& args, const std::vector<int64_t>& x) {
  const OperatorDef def = CreateOperatorDef("Conv", "", {"X", "W"}, {"Y"}, args);
  return ConvPoolArgs(ArgumentHelper(def)).Resolve(x).FitsSymmetricPads();
}

TEST(CudnnOps, FitsSymmetricPadsAcceptsTheGeometriesCudnnComputesExactly) {
  const std::vector<int64_t> x7{1, 1, 7, 7}, x8{1, 1, 8, 8};
  EXPECT_TRUE(Fits({MakeArgument<int>("kernel", 3), MakeArgument<int>("pad", 1)}, x7));
  EXPECT_TRUE(Fits({MakeArgument<int>("kernel", 3), MakeArgument<int>("stride", 2)}, x7));
  // pads [t, l, b, r] = [1, 1, 0, 0], stride 2: 8 + 1 - 3 and 8 + 2 - 3 give the same 4 outputs ...
  EXPECT_TRUE(Fits({MakeArgument<int>("kernel", 3), MakeArgument<int>("stride", 2),
                    MakeArgument("pads", std::vector<int64_t>{1, 1, 0, 0})},
                   x8));
  // ... but 3 and 4 outputs on a 7x7 input.
  EXPECT_FALSE(Fits({MakeArgument<int>("kernel", 3), MakeArgument<int>("stride", 2),
                     MakeArgument("pads", std::vector<int64_t>{1, 1, 0, 0})},
                    x7));
  // SAME with an even kernel pads 1 before and 2 after.
  EXPECT_FALSE(Fits({MakeArgument<int>("kernel", 4), MakeArgument<int>("legacy_pad", 2)}, x7));
  // CAFFE_LEGACY_POOLING's ceil rule enlarges the tail pad: 3 outputs where the floor rule gives 2.
  EXPECT_FALSE(Fits({MakeArgument<int>("kernel", 3), MakeArgument<int>("stride", 2),
                     MakeArgument<int>("legacy_pad", 3)},
                    std::vector<int64_t>{1, 1, 6, 6}));
  EXPECT_TRUE(Fits({MakeArgument<int>("kernel", 3), MakeArgument<int>("dilation", 2),
                    MakeArgument<int>("pad", 2)},
                   x7));
}

class CudnnConvCache : public ::testing::TestWithParam<bool> {};

TEST_P(CudnnConvCache, SearchesOncePerPassAndShape) {
  if (NumCudaDevices() == 0) GTEST_SKIP() << "no GPU";
  const bool exhaustive = GetParam();
  Workspace ws;
  FeedGpu(&ws, "X", {2, 3, 8, 8});
  FeedGpu(&ws, "W", {4, 3, 3, 3});
  FeedGpu(&ws, "b", {4});
  const std::vector<Argument> args{MakeArgument<int>("kernel", 3), MakeArgument<int>("pad", 1),
                                   MakeArgument<int>("exhaustive_search", exhaustive ? 1 : 0)};
  auto fwd =
      CreateOperator(OnGpu(CreateOperatorDef("Conv", "", {"X", "W", "b"}, {"Y"}, args)), &ws);
  auto* conv = dynamic_cast<CudnnConvOpBase*>(fwd.get());
  ASSERT_NE(conv, nullptr);
  EXPECT_EQ(conv->algorithm_searches(), 0);
  ASSERT_TRUE(fwd->Run());
  EXPECT_EQ(conv->algorithm_searches(), 1);
  ASSERT_TRUE(fwd->Run());
  EXPECT_EQ(conv->algorithm_searches(), 1) << "a repeated shape searched again";
  FeedGpu(&ws, "X", {4, 3, 5, 7});
  ASSERT_TRUE(fwd->Run());
  EXPECT_EQ(conv->algorithm_searches(), 2) << "a new X shape must search";
  FeedGpu(&ws, "X", {2, 3, 8, 8});
  ASSERT_TRUE(fwd->Run());
  EXPECT_EQ(conv->algorithm_searches(), 2) << "the first shape is still cached";
  EXPECT_EQ(ws.GetBlob("Y")->Get<Tensor>().dims(), (std::vector<int64_t>{2, 4, 8, 8}));

  // The gradient searches backward filter and backward data once per shape.
  FeedGpu(&ws, "dY", {2, 4, 8, 8});
  auto grad = CreateOperator(
      OnGpu(CreateOperatorDef("ConvGradient", "", {"X", "W", "dY"}, {"dW", "db", "dX"}, args)),
      &ws);
  auto* conv_grad = dynamic_cast<CudnnConvOpBase*>(grad.get());
  ASSERT_NE(conv_grad, nullptr);
  ASSERT_TRUE(grad->Run());
  EXPECT_EQ(conv_grad->algorithm_searches(), 2);
  ASSERT_TRUE(grad->Run());
  EXPECT_EQ(conv_grad->algorithm_searches(), 2);

  // Without dX only the filter pass searches.
  auto filter_only = CreateOperator(
      OnGpu(CreateOperatorDef("ConvGradient", "", {"X", "W", "dY"}, {"dW", "db"}, args)), &ws);
  ASSERT_TRUE(filter_only->Run());
  EXPECT_EQ(dynamic_cast<CudnnConvOpBase*>(filter_only.get())->algorithm_searches(), 1);
}

INSTANTIATE_TEST_SUITE_P(HeuristicAndExhaustive, CudnnConvCache, ::testing::Values(false, true));

TEST(CudnnOps, ConvRunsWithAZeroWorkspaceLimit) {
  if (NumCudaDevices() == 0) GTEST_SKIP() << "no GPU";
  // A 0-byte limit still admits the implicit-GEMM algorithms, which need no workspace: the op runs.
  Workspace ws;
  FeedGpu(&ws, "X", {1, 2, 6, 6});
  FeedGpu(&ws, "W", {3, 2, 3, 3});
  const std::vector<Argument> args{MakeArgument<int>("kernel", 3),
                                   MakeArgument<int64_t>("ws_nbytes_limit", 0)};
  auto op = CreateOperator(OnGpu(CreateOperatorDef("Conv", "", {"X", "W"}, {"Y"}, args)), &ws);
  EXPECT_TRUE(op->Run());
}

}  // namespace caffe2
