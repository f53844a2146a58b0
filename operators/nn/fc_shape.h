// The shapes of FC / FCTransposed and their gradients (contract in fc_op.cc), shared by the CPU
// kernels and the cuBLAS ones: X viewed as (M, K), W as (N, K) or, transposed, (K, N).
#pragma once

#include "core/tensor.h"

namespace caffe2 {

struct FCShape {
  int64_t M, K, N;
};

// The element types are the caller's to check (the CPU takes float, CUDA float and float16).
inline FCShape CheckFCShapes(const Tensor& X, const Tensor& W, int axis, int axis_w, bool transposed) {
  const int ax = axis < 0 ? axis + X.ndim() : axis;
  const int axw = axis_w < 0 ? axis_w + W.ndim() : axis_w;
  C2_ENFORCE(ax >= 0 && ax <= X.ndim(), "axis ", axis, " out of range for X ", Tensor::DimsString(X.dims()));
  C2_ENFORCE(axw >= 0 && axw <= W.ndim(), "axis_w ", axis_w, " out of range for W ",
             Tensor::DimsString(W.dims()));
  const int64_t w_k = transposed ? W.size_to_dim(axw) : W.size_from_dim(axw);
  FCShape s{X.size_to_dim(ax), X.size_from_dim(ax), transposed ? W.size_from_dim(axw) : W.size_to_dim(axw)};
  C2_ENFORCE(w_k == s.K, "X ", Tensor::DimsString(X.dims()), " has ", s.K,
             " features per row but W ", Tensor::DimsString(W.dims()), " expects ", w_k);
  return s;
}

// Y's dims: X.dims[:axis] + [N].
inline std::vector<int64_t> FCOutputDims(const Tensor& X, int axis, int64_t N) {
  std::vector<int64_t> dims(X.dims().begin(), X.dims().begin() + (axis < 0 ? axis + X.ndim() : axis));
  dims.push_back(N);
  return dims;
}

}  // namespace caffe2
