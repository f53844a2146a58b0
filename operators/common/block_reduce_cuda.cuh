// Block-wide reductions for CUDA kernels launched with kCudaThreadsPerBlock threads per block
// (include from .cu files only). Every thread of the block must call them (they synchronise), and
// every thread gets the result, so a kernel may call them repeatedly, e.g. once per row in a
// grid-stride loop over rows.
//
//   BlockSum(v)  the sum of v over the block's threads
//   BlockMax(v)  the largest v (float; -inf for a block whose threads all pass -inf)
//
// Row kernels (one block per row) launch CudaRowBlocks(rows) blocks and loop
//   for (int64_t i = blockIdx.x; i < rows; i += gridDim.x)
// so that any number of rows is covered.
//
// Sums of float terms that feed a loss are accumulated in double, as the CPU kernels do.
#pragma once

#include <cub/cub.cuh>

#include "core/cuda/cuda_launch.h"

namespace caffe2 {

inline int CudaRowBlocks(int64_t rows) { return CudaBlocks(rows * kCudaThreadsPerBlock); }

namespace block_reduce_detail {

struct SumOp {
  template <class T>
  __device__ T operator()(const T& a, const T& b) const {
    return a + b;
  }
};

struct MaxOp {
  template <class T>
  __device__ T operator()(const T& a, const T& b) const {
    return a < b ? b : a;
  }
};

template <class T, class Op>
__device__ T BlockAllReduce(T v, Op op) {
  using Reduce = cub::BlockReduce<T, kCudaThreadsPerBlock>;
  __shared__ typename Reduce::TempStorage storage;
  __shared__ T result;
  const T r = Reduce(storage).Reduce(v, op);  // valid in thread 0
  if (threadIdx.x == 0) result = r;
  __syncthreads();
  const T all = result;
  __syncthreads();  // storage and result are free for the next call
  return all;
}

}  // namespace block_reduce_detail

template <class T>
__device__ T BlockSum(T v) {
  return block_reduce_detail::BlockAllReduce(v, block_reduce_detail::SumOp());
}

__device__ inline float BlockMax(float v) {
  return block_reduce_detail::BlockAllReduce(v, block_reduce_detail::MaxOp());
}

}  // namespace caffe2
