// The (N, D) view of ElementwiseLinear and its gradient (contract in elementwise_linear_op.cc),
// shared by the CPU and CUDA kernels.
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

}  // namespace caffe2
