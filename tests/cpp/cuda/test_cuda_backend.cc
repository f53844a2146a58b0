#include <gtest/gtest.h>

#include <thread>
#include <vector>

#include "core/cuda/caching_allocator.h"
#include "core/cuda/cuda_context.h"
#include "core/argument.h"
#include "core/device_sync.h"
#include "core/gpu_fallback_declarations.h"
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
  return CreateOperatorDef(
      "ConstantFill", "", {}, {out},
      {MakeArgument("shape", std::vector<int64_t>{2, 3}), MakeArgument("value", value)});
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
  for (const char* type :
       {"Copy", "CopyCPUToGPU", "CopyGPUToCPU", "ConstantFill", "GivenTensorFill"}) {
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
    EXPECT_NE(std::string(e.what()).find("no CUDA device is available"), std::string::npos)
        << e.what();
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

TEST(CudaBackend, BlocksFreedWhileDeferringStayWithTheirThreadUntilTheWait) {
  if (NumCudaDevices() == 0) GTEST_SKIP() << "no GPU";
  auto& allocator = GetCudaCachingAllocator();
  allocator.EmptyCache();
  constexpr size_t kBytes = 3 << 20;  // a bin of its own
  void* block = nullptr;
  {
    DeferDeviceSync deferred;
    block = allocator.Allocate(kBytes, 0);
    allocator.Free(block, 0);
    void* other_thread_got = nullptr;
    std::thread([&] { other_thread_got = allocator.Allocate(kBytes, 0); }).join();
    EXPECT_NE(other_thread_got, block) << "another thread's stream may still use the block";
    allocator.Free(other_thread_got, 0);
    void* same_thread_got = allocator.Allocate(kBytes, 0);
    EXPECT_EQ(same_thread_got, block) << "the same thread's stream runs in order";
    allocator.Free(same_thread_got, 0);
    deferred.Finish();
  }
  void* after_wait = nullptr;
  std::thread([&] {
    // Two blocks are cached now; one of them must be the released one.
    void* first = allocator.Allocate(kBytes, 0);
    void* second = allocator.Allocate(kBytes, 0);
    after_wait = first == block ? first : second;
    allocator.Free(first, 0);
    allocator.Free(second, 0);
  }).join();
  EXPECT_EQ(after_wait, block);
}

TEST(CudaBackend, SimpleNetOnGpuDefersAndStillMatchesTheOpByOpRun) {
  if (NumCudaDevices() == 0) GTEST_SKIP() << "no GPU";
  Workspace ws;
  NetDef net;
  net.set_name("deferred");
  *net.add_op() = OnGpu(FillDef("a", 2.f));
  *net.add_op() = OnGpu(FillDef("b", 3.f));
  *net.add_op() = OnGpu(CreateOperatorDef("Mul", "", {"a", "b"}, {"c"}));
  *net.add_op() = OnGpu(CreateOperatorDef("Add", "", {"c", "a"}, {"c"}));
  *net.add_op() = OnGpu(CreateOperatorDef("CopyGPUToCPU", "", {"c"}, {"host"}));
  ASSERT_TRUE(ws.RunNetOnce(net));
  EXPECT_FALSE(DeferDeviceSync::Active());
  const Tensor& host = ws.GetBlob("host")->Get<Tensor>();
  ASSERT_EQ(host.numel(), 6);
  for (int i = 0; i < 6; ++i) EXPECT_EQ(host.data<float>()[i], 8.f);
}

TEST(CudaBackend, EveryDeclaredGpuFallbackIsACudaRegistration) {
  const std::vector<std::string> declared = DeclaredGpuFallbacks();
  EXPECT_FALSE(declared.empty());
  for (const std::string& type : declared) {
    EXPECT_NE(OperatorRegistry::Find(kCUDA, type), nullptr) << type;
  }
  // A type declared after the backend loaded (a library of ops loaded later) is registered at once.
  ASSERT_EQ(OperatorRegistry::Find(kCUDA, "FallbackDeclaredAfterLoad"), nullptr);
  DeclareGpuFallback("FallbackDeclaredAfterLoad");
  EXPECT_NE(OperatorRegistry::Find(kCUDA, "FallbackDeclaredAfterLoad"), nullptr);
}

}  // namespace caffe2
