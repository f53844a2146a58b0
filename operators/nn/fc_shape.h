// The shapes of FC / FCTransposed and their gradients (contract in fc_op.cc), shared by the CPU
// kernels and the cuBLAS ones: X viewed as (M, K), W as (N, K) or, transposed, (K, N).
#pragma once

#include "core/tensor.h"

namespace caffe2 {

struct FCShape {
  int64_t M, K, N;
};

// Checks X and W dims (K must agree; errors name both) and returns (M, K, N). The element types are
// the caller's to check (the CPU takes float, CUDA float and float16).
inline FCShape CheckFCDims(const std::vector<int64_t>& x, const std::vector<int64_t>& w, int axis,
                           int axis_w, bool transposed) {
  const int xn = static_cast<int>(x.size()), wn = static_cast<int>(w.size());
  const int ax = axis < 0 ? axis + xn : axis;
  const int axw = axis_w < 0 ? axis_w + wn : axis_w;
  C2_ENFORCE(ax >= 0 && ax <= xn, "axis ", axis, " out of range for X ", Tensor::DimsString(x));
  C2_ENFORCE(axw >= 0 && axw <= wn, "axis_w ", axis_w, " out of range for W ",
             Tensor::DimsString(w));
  auto product = [](const std::vector<int64_t>& d, int from, int to) {
    return CheckedNumel(std::vector<int64_t>(d.begin() + from, d.begin() + to));
  };
  const int64_t w_k = transposed ? product(w, 0, axw) : product(w, axw, wn);
  FCShape s{product(x, 0, ax), product(x, ax, xn),
            transposed ? product(w, axw, wn) : product(w, 0, axw)};
  C2_ENFORCE(w_k == s.K, "X ", Tensor::DimsString(x), " has ", s.K, " features per row but W ",
             Tensor::DimsString(w), " expects ", w_k);
  return s;
}

inline FCShape CheckFCShapes(const Tensor& X, const Tensor& W, int axis, int axis_w,
                             bool transposed) {
  return CheckFCDims(X.dims(), W.dims(), axis, axis_w, transposed);
}

// FCGradient's dY: M x N values.
inline void CheckFCGradientOutput(const Tensor& dY, const FCShape& s) {
  C2_ENFORCE(dY.numel() == s.M * s.N, "dY ", Tensor::DimsString(dY.dims()), " must hold ", s.M,
             " x ", s.N, " values");
}

// Y's dims: X.dims[:axis] + [N].
inline std::vector<int64_t> FCOutputDims(const Tensor& X, int axis, int64_t N) {
  std::vector<int64_t> dims(X.dims().begin(),
                            X.dims().begin() + (axis < 0 ? axis + X.ndim() : axis));
  dims.push_back(N);
  return dims;
}

}  // namespace caffe2
