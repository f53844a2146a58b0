// Launch helpers for the CUDA kernels of the operators (include from .cu files only).
//
// - C2_CUDA_KERNEL_LOOP(i, n): a grid-stride loop over [0, n) with 64-bit indices, so any launch
//   size covers any n.
// - CudaBlocks(n): the grid size for n elements at kCudaThreadsPerBlock threads per block, capped
//   at kCudaMaxBlocks (the grid-stride loop covers the rest); at least 1.
// - Launch with <<<CudaBlocks(n), kCudaThreadsPerBlock, 0, context_.stream()>>> and follow with
//   C2_CUDA_KERNEL_LAUNCH_CHECK() (core/cuda/cuda_check.h).
#pragma once

#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>

#include "core/cuda/cuda_check.h"

namespace caffe2 {

constexpr int kCudaThreadsPerBlock = 256;
constexpr int64_t kCudaMaxBlocks = 4096;

inline int CudaBlocks(int64_t n) {
  const int64_t blocks = (n + kCudaThreadsPerBlock - 1) / kCudaThreadsPerBlock;
  return static_cast<int>(std::max<int64_t>(1, std::min(blocks, kCudaMaxBlocks)));
}

}  // namespace caffe2

#define C2_CUDA_KERNEL_LOOP(i, n)                                                        \
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < (n); \
       i += static_cast<int64_t>(blockDim.x) * gridDim.x)
