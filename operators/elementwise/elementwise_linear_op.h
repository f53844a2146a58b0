// The (N, D) view and the input checks of ElementwiseLinear and its gradient (contract in
// elementwise_linear_op.cc), shared by the CPU and CUDA kernels.
#pragma once

#include "core/tensor.h"

namespace caffe2 {

struct NDShape {
  int64_t N, D;
};

inline NDShape CheckElementwiseLinearShapes(const Tensor& X, const Tensor& w, int axis) {
  const int ax = axis < 0 ? axis + X.ndim() : axis;
  C2_ENFORCE(ax >= 0 && ax <= X.ndim(), "axis ", axis, " out of range for X ",
             Tensor::DimsString(X.dims()));
  NDShape s{X.size_to_dim(ax), X.size_from_dim(ax)};
  C2_ENFORCE(X.IsType<float>() && w.IsType<float>(), "float tensors expected, got X ",
             X.meta().name, " and w ", w.meta().name);
  C2_ENFORCE(w.ndim() == 1 && w.numel() == s.D, "w ", Tensor::DimsString(w.dims()),
             " must be 1-d with ", s.D, " elements for X ", Tensor::DimsString(X.dims()),
             " at axis ", axis);
  return s;
}

// ElementwiseLinear's b: D floats.
inline void CheckElementwiseLinearBias(const Tensor& b, const NDShape& s) {
  C2_ENFORCE(b.IsType<float>() && b.ndim() == 1 && b.numel() == s.D, "b ", b.DebugString(),
             " must be a 1-d float tensor with ", s.D, " elements");
}

// ElementwiseLinearGradient's dY: float, shaped like X.
inline void CheckElementwiseLinearGradient(const Tensor& dY, const Tensor& X) {
  C2_ENFORCE(dY.dims() == X.dims() && dY.IsType<float>(), "dY ", dY.DebugString(),
             " must be float with the shape of X ", Tensor::DimsString(X.dims()));
}

}  // namespace caffe2
