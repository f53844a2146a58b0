#include "core/cuda/cuda_context.h"

#include <cudnn.h>

#include <map>
#include <set>
#include <utility>

#include "core/context.h"
#include "core/cuda/caching_allocator.h"
#include "core/cuda/cuda_check.h"
#include "core/device_sync.h"

namespace caffe2 {

int NumCudaDevices() {
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess) {
    cudaGetLastError();  // clear the sticky "no driver" error
    return 0;
  }
  return count;
}

int CurrentCudaDevice() {
  int device = 0;
  C2_CUDA_CHECK(cudaGetDevice(&device));
  return device;
}

int CudaRuntimeVersion() { return CUDART_VERSION; }
int CudnnVersion() { return static_cast<int>(cudnnGetVersion()); }

namespace {

// Streams, cuBLAS and cuDNN handles of the calling thread, created on first use.
struct ThreadResources {
  std::map<std::pair<int, int>, cudaStream_t> streams;
  std::set<std::pair<int, int>> unsynced;  // streams with work queued in a DeferDeviceSync scope
  std::map<std::pair<int, int>, cublasHandle_t> cublas;
  std::map<std::pair<int, int>, cudnnHandle_t> cudnn;
  ~ThreadResources() {
    for (auto& kv : cudnn) cudnnDestroy(kv.second);
    for (auto& kv : cublas) cublasDestroy(kv.second);
    for (auto& kv : streams) cudaStreamDestroy(kv.second);
  }
};

ThreadResources& Resources() {
  static thread_local ThreadResources resources;
  return resources;
}

}  // namespace

CUDAContext::CUDAContext(const DeviceOption& option)
    : seed_(option.has_random_seed() ? option.random_seed() : RandomNumberSeed()) {
  int count = NumCudaDevices();
  C2_ENFORCE(count > 0, "A CUDA operator was created, but no CUDA device is available");
  gpu_id_ = option.has_cuda_gpu_id() ? option.cuda_gpu_id() : CurrentCudaDevice();
  C2_ENFORCE(gpu_id_ >= 0 && gpu_id_ < count, "cuda_gpu_id ", gpu_id_, " is out of range: ", count,
             " CUDA devices are visible");
}

cudaStream_t CUDAContext::Stream(int gpu_id, int stream_id) {
  auto& slot = Resources().streams[{gpu_id, stream_id}];
  if (!slot) {
    C2_CUDA_CHECK(cudaSetDevice(gpu_id));
    C2_CUDA_CHECK(cudaStreamCreateWithFlags(&slot, cudaStreamNonBlocking));
  }
  return slot;
}

void CUDAContext::SwitchToDevice(int stream_id) {
  stream_id_ = stream_id;
  C2_CUDA_CHECK(cudaSetDevice(gpu_id_));
}

cudaStream_t CUDAContext::stream() const { return Stream(gpu_id_, stream_id_); }

cublasHandle_t CUDAContext::cublas_handle() {
  auto& slot = Resources().cublas[{gpu_id_, stream_id_}];
  if (!slot) {
    C2_CUDA_CHECK(cudaSetDevice(gpu_id_));
    C2_CUBLAS_CHECK(cublasCreate(&slot));
  }
  C2_CUBLAS_CHECK(cublasSetStream(slot, stream()));
  return slot;
}

cudnnHandle_t CUDAContext::cudnn_handle() {
  auto& slot = Resources().cudnn[{gpu_id_, stream_id_}];
  if (!slot) {
    C2_CUDA_CHECK(cudaSetDevice(gpu_id_));
    C2_CUDNN_CHECK(cudnnCreate(&slot));
  }
  C2_CUDNN_CHECK(cudnnSetStream(slot, stream()));
  return slot;
}

curandGenerator_t CUDAContext::curand_generator() {
  if (!curand_) {
    C2_CUDA_CHECK(cudaSetDevice(gpu_id_));
    C2_CURAND_CHECK(curandCreateGenerator(&curand_, CURAND_RNG_PSEUDO_DEFAULT));
    C2_CURAND_CHECK(curandSetPseudoRandomGeneratorSeed(curand_, seed_));
  }
  C2_CURAND_CHECK(curandSetStream(curand_, stream()));
  return curand_;
}

CUDAContext::~CUDAContext() {
  if (curand_) curandDestroyGenerator(curand_);
}

void CUDAContext::FinishDeviceComputation() {
  if (DeferDeviceSync::Active()) {
    C2_CUDA_CHECK(cudaGetLastError());  // a failed launch still names its op
    Resources().unsynced.insert({gpu_id_, stream_id_});
    return;
  }
  C2_CUDA_CHECK(cudaStreamSynchronize(stream()));
  C2_CUDA_CHECK(cudaGetLastError());
}

void SynchronizeDeferredCudaWork() {
  auto& resources = Resources();
  std::string error;
  for (const auto& [gpu, stream_id] : resources.unsynced) {
    cudaError_t status = cudaSetDevice(gpu);
    if (status == cudaSuccess) status = cudaStreamSynchronize(CUDAContext::Stream(gpu, stream_id));
    if (status == cudaSuccess) status = cudaGetLastError();
    if (status != cudaSuccess && error.empty()) {
      error = MakeString("GPU ", gpu, ": ", cudaGetErrorString(status), " (",
                         static_cast<int>(status), ")");
    }
  }
  resources.unsynced.clear();
  // The blocks freed meanwhile are idle now (on an error the device is unusable anyway).
  GetCudaCachingAllocator().ReleaseThreadPendingBlocks();
  C2_ENFORCE(error.empty(), "Encountered CUDA error in the device work of a net: ", error,
             " (run with --caffe2_sync_device_each_op=1 to find the op that caused it)");
}

}  // namespace caffe2
