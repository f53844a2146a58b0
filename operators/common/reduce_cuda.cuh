// Sums over a (pre, n, post) view on the GPU, the reduction shared by the CUDA kernels of
// ReduceFront/Back, SumElements, SumSqrElements, SumReduceLike and the channel statistics:
//   out[j] = scale * sum over p < pre, q < post of value(i, j),  i = (p * n + j) * post + q
// `value` is a device functor of the flat index i and the output index j (so it can read several
// inputs, square, or subtract a per-channel mean). One block per output element, accumulating in
// Acc (float, or double for double data) in a fixed order per launch size: the result does not
// depend on timing. Include from .cu files only.
#pragma once

#include <cstdint>

#include "core/cuda/cuda_launch.h"
#include "operators/common/half_cuda.cuh"

namespace caffe2 {
namespace reduce_cuda {

template <class Acc, class TOut, class F>
__global__ void SumOverKernel(int64_t pre, int64_t n, int64_t post, F value, Acc scale, TOut* out) {
  __shared__ Acc partial[kCudaThreadsPerBlock];
  const int64_t count = pre * post;
  for (int64_t j = blockIdx.x; j < n; j += gridDim.x) {
    Acc acc = 0;
    for (int64_t k = threadIdx.x; k < count; k += blockDim.x) {
      const int64_t p = k / post, q = k % post;
      acc += static_cast<Acc>(value((p * n + j) * post + q, j));
    }
    partial[threadIdx.x] = acc;
    __syncthreads();
    for (int s = blockDim.x / 2; s > 0; s >>= 1) {
      if (threadIdx.x < s) partial[threadIdx.x] += partial[threadIdx.x + s];
      __syncthreads();
    }
    if (threadIdx.x == 0) out[j] = FromCompute<TOut>(partial[0] * scale);
    __syncthreads();
  }
}

}  // namespace reduce_cuda

// Launches SumOverKernel on `stream` (nothing for n == 0; count == 0 writes zeros).
template <class Acc, class TOut, class F>
void SumOver(int64_t pre, int64_t n, int64_t post, F value, Acc scale, TOut* out,
             cudaStream_t stream) {
  if (n == 0) return;
  const int blocks = static_cast<int>(n < kCudaMaxBlocks ? n : kCudaMaxBlocks);
  reduce_cuda::SumOverKernel<Acc>
      <<<blocks, kCudaThreadsPerBlock, 0, stream>>>(pre, n, post, value, scale, out);
  C2_CUDA_KERNEL_LAUNCH_CHECK();
}

// dst[i] = scale * src[(i / post) % n] over a (pre, n, post) view: spreads a reduction's gradient.
template <class T>
__global__ void BroadcastOverKernel(int64_t total, int64_t n, int64_t post, const T* src,
                                    float scale, T* dst) {
  C2_CUDA_KERNEL_LOOP(i, total) { dst[i] = FromCompute<T>(ToCompute(src[(i / post) % n]) * scale); }
}

template <class T>
void BroadcastOver(int64_t pre, int64_t n, int64_t post, const T* src, float scale, T* dst,
                   cudaStream_t stream) {
  const int64_t total = pre * n * post;
  if (total == 0) return;
  BroadcastOverKernel<<<CudaBlocks(total), kCudaThreadsPerBlock, 0, stream>>>(total, n, post, src,
                                                                              scale, dst);
  C2_CUDA_KERNEL_LAUNCH_CHECK();
}

}  // namespace caffe2
