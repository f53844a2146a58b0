#include <gtest/gtest.h>

#include <vector>

#include "core/cuda/caching_allocator.h"
#include "core/cuda/cuda_context.h"
#include "core/argument.h"
#include "core/gradient.h"
#include "core/operator.h"
#include "core/workspace.h"

namespace caffe2 {
namespace {

OperatorDef OnGpu(OperatorDef def, int gpu = 0) {
  def.mutable_device_option()->set_device_type(kCUDA);
  def.mutable_device_option()->set_cuda_gpu_id(gpu);
  return def;
}

OperatorDef FillDef(const std::string& out, float value) {
  return CreateOperatorDef("ConstantFill", "", {}, {out},
                           {MakeArgument("shape", std::vector<int64_t>{2, 3}),
                            MakeArgument("value", value)});
}

}  // namespace

TEST(CudaBackend, BinSizesRoundUp) {
  EXPECT_EQ(CudaCachingAllocator::BinSize(1), 512u);
  EXPECT_EQ(CudaCachingAllocator::BinSize(512), 512u);
  EXPECT_EQ(CudaCachingAllocator::BinSize(513), 1024u);
  EXPECT_EQ(CudaCachingAllocator::BinSize((1u << 20) + 1), 2u << 20);
}

TEST(CudaBackend, VersionsAreCompiledIn) {
  EXPECT_GE(CudaRuntimeVersion(), 12000);
  EXPECT_GE(CudnnVersion(), 8000);
}

TEST(CudaBackend, CudaOpsAreRegistered) {
  for (const char* type : {"Copy", "CopyCPUToGPU", "CopyGPUToCPU", "ConstantFill", "GivenTensorFill"}) {
    EXPECT_NE(OperatorRegistry::Find(kCUDA, type), nullptr) << type;
  }
}

TEST(CudaBackend, WithoutGpuCreatingACudaOpIsAClearError) {
  if (NumCudaDevices() > 0) GTEST_SKIP() << "a GPU is present";
  Workspace ws;
  try {
    ws.RunOperatorOnce(OnGpu(FillDef("x", 1.f)));
    FAIL() << "expected an error";
  } catch (const EnforceNotMet& e) {
    EXPECT_NE(std::string(e.what()).find("no CUDA device is available"), std::string::npos) << e.what();
  }
}

TEST(CudaBackend, FillCopyRoundTripOnGpu) {
  if (NumCudaDevices() == 0) GTEST_SKIP() << "no GPU";
  Workspace ws;
  ws.RunOperatorOnce(OnGpu(FillDef("g", 2.5f)));
  EXPECT_EQ(ws.GetBlob("g")->Get<Tensor>().device().type, kCUDA);
  ws.RunOperatorOnce(OnGpu(CreateOperatorDef("CopyGPUToCPU", "", {"g"}, {"h"})));
  const Tensor& h = ws.GetBlob("h")->Get<Tensor>();
  ASSERT_EQ(h.device().type, kCPU);
  for (int64_t i = 0; i < h.numel(); ++i) EXPECT_EQ(h.data<float>()[i], 2.5f);
  ws.RunOperatorOnce(OnGpu(CreateOperatorDef("CopyCPUToGPU", "", {"h"}, {"g2"})));
  ws.RunOperatorOnce(OnGpu(CreateOperatorDef("Copy", "", {"g2"}, {"g3"})));
  Tensor back;
  back.CopyFrom(ws.GetBlob("g3")->Get<Tensor>());
  EXPECT_EQ(back.data<float>()[5], 2.5f);
}

TEST(CudaBackend, AllocatorReusesFreedBlocks) {
  if (NumCudaDevices() == 0) GTEST_SKIP() << "no GPU";
  auto& allocator = GetCudaCachingAllocator();
  void* a = allocator.Allocate(1000, 0);
  allocator.Free(a, 0);
  const auto before = allocator.stats();
  void* b = allocator.Allocate(900, 0);  // same 1024-byte bin
  EXPECT_EQ(a, b);
  EXPECT_EQ(allocator.stats().cache_hits, before.cache_hits + 1);
  allocator.Free(b, 0);
}

}  // namespace caffe2
