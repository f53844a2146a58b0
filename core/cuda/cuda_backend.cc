// Registers the CUDA allocator and the CPU<->GPU copy routines when libcaffe2_cuda loads. Copies run
// on the calling thread's stream 0 of the GPU involved and are synchronous for the caller.
#include <cuda_runtime.h>

#include "core/allocator.h"
#include "core/cuda/caching_allocator.h"
#include "core/cuda/cuda_check.h"
#include "core/cuda/cuda_context.h"

namespace caffe2 {
namespace {

void CopyWithCuda(size_t nbytes, const void* src, Device src_device, void* dst, Device dst_device) {
  if (nbytes == 0) return;
  const int gpu = dst_device.type == kCUDA ? dst_device.id : src_device.id;
  C2_CUDA_CHECK(cudaSetDevice(gpu));
  cudaStream_t stream = CUDAContext::Stream(gpu, 0);
  C2_CUDA_CHECK(cudaMemcpyAsync(dst, src, nbytes, cudaMemcpyDefault, stream));
  C2_CUDA_CHECK(cudaStreamSynchronize(stream));
}

bool RegisterCudaBackend() {
  SetAllocator(kCUDA, &GetCudaCachingAllocator());
  RegisterCopyBytes(kCPU, kCUDA, &CopyWithCuda);
  RegisterCopyBytes(kCUDA, kCPU, &CopyWithCuda);
  RegisterCopyBytes(kCUDA, kCUDA, &CopyWithCuda);
  return true;
}

const bool kCudaBackendRegistered [[maybe_unused]] = RegisterCudaBackend();

}  // namespace
}  // namespace caffe2
