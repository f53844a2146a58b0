// CUDAContext: the device state of one CUDA operator (spec §5.9).
//
// - The GPU is DeviceOption.cuda_gpu_id (the current device when absent).
// - Streams come from a per-thread pool keyed by (gpu, stream id); they are non-blocking streams
//   created on first use. cuBLAS and cuDNN handles are per (gpu, stream) too, bound to their
//   stream.
// - The cuRAND generator is per context, created on first use, seeded from the DeviceOption's
//   random_seed (else RandomNumberSeed()) and bound to the context's stream.
// - FinishDeviceComputation synchronises the stream and reports any pending CUDA error; inside a
//   DeferDeviceSync scope (core/device_sync.h) it only checks the launch, and the scope's end calls
//   SynchronizeDeferredCudaWork for every stream the thread used.
// - Nothing touches the driver until a context is constructed, so importing the library on a
//   machine without a GPU is safe; NumCudaDevices() answers 0 there.
#pragma once

#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <cudnn.h>
#include <curand.h>

#include <cstdint>

#include "caffe2/proto/caffe2.pb.h"
#include "core/device.h"

namespace caffe2 {

// Number of visible GPUs; 0 when there is no driver or device.
int NumCudaDevices();
int CurrentCudaDevice();
// Compile-time CUDA runtime and cuDNN versions (e.g. 13000 and 90xxx).
int CudaRuntimeVersion();
int CudnnVersion();

// Waits for every stream the calling thread queued work on inside a DeferDeviceSync scope, then
// lets the caching allocator reuse the blocks the thread freed meanwhile; throws on a CUDA error.
void SynchronizeDeferredCudaWork();

class CUDAContext {
 public:
  CUDAContext() : CUDAContext(DeviceOption()) {}
  explicit CUDAContext(const DeviceOption& option);
  ~CUDAContext();
  CUDAContext(const CUDAContext&) = delete;
  CUDAContext& operator=(const CUDAContext&) = delete;

  // Makes this context's GPU current and selects the stream used by later calls.
  void SwitchToDevice(int stream_id = 0);
  void FinishDeviceComputation();

  int gpu_id() const { return gpu_id_; }
  Device device() const { return Device{kCUDA, gpu_id_}; }
  cudaStream_t stream() const;
  cublasHandle_t cublas_handle();
  cudnnHandle_t cudnn_handle();
  curandGenerator_t curand_generator();
  uint32_t seed() const { return seed_; }

  // The stream of (gpu, stream_id) for the calling thread.
  static cudaStream_t Stream(int gpu_id, int stream_id);

 private:
  int gpu_id_;
  int stream_id_ = 0;
  uint32_t seed_;
  curandGenerator_t curand_ = nullptr;
};

}  // namespace caffe2
