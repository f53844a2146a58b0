// Registers the CUDA allocator, the CPU<->GPU copy routines and the deferred-sync handler when
// libcaffe2_cuda loads. Copies run on the calling thread's stream 0 of the GPU involved (the
// destination's, for GPU to GPU, after the source's stream has drained) and are synchronous.
#include <cuda_runtime.h>

#include "core/allocator.h"
#include "core/cuda/caching_allocator.h"
#include "core/cuda/cuda_check.h"
#include "core/cuda/cuda_context.h"
#include "core/device_sync.h"

namespace caffe2 {
namespace {

void CopyWithCuda(size_t nbytes, const void* src, Device src_device, void* dst, Device dst_device) {
  if (nbytes == 0) return;
  const int gpu = dst_device.type == kCUDA ? dst_device.id : src_device.id;
  if (src_device.type == kCUDA && src_device.id != gpu) {
    // The source may still be written by work queued on its own GPU's stream (deferred sync).
    C2_CUDA_CHECK(cudaSetDevice(src_device.id));
    C2_CUDA_CHECK(cudaStreamSynchronize(CUDAContext::Stream(src_device.id, 0)));
  }
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
  SetDeferredDeviceSyncHandler(&SynchronizeDeferredCudaWork);
  return true;
}

const bool kCudaBackendRegistered [[maybe_unused]] = RegisterCudaBackend();

}  // namespace
}  // namespace caffe2
