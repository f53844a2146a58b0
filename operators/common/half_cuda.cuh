// float16 in CUDA kernels: tensors of caffe2::float16 are handed to kernels as __half (same
// layout), and the math runs in float. CudaStorage<T> maps a tensor type to its kernel storage
// type; ToCompute/FromCompute convert at the loads and stores (identity for other types).
#pragma once

#include <cuda_fp16.h>

#include "core/types.h"

namespace caffe2 {

template <class T>
struct CudaStorage {
  using type = T;
};
template <>
struct CudaStorage<float16> {
  using type = __half;
};

template <class T>
__host__ __device__ inline T ToCompute(T v) {
  return v;
}
__device__ inline float ToCompute(__half v) { return __half2float(v); }

template <class T, class V>
__device__ inline T FromCompute(V v) {
  return static_cast<T>(v);
}
template <>
__device__ inline __half FromCompute<__half, float>(float v) {
  return __float2half(v);
}

// The storage pointer of a tensor's data for a kernel.
template <class T, class Tensor>
auto* StorageData(const Tensor& t) {
  return reinterpret_cast<const typename CudaStorage<T>::type*>(t.template data<T>());
}
template <class T, class Tensor>
auto* MutableStorageData(Tensor* t) {
  return reinterpret_cast<typename CudaStorage<T>::type*>(t->template mutable_data<T>());
}

}  // namespace caffe2
