// Input checks of CrossEntropy and CrossEntropyGradient, shared by the CPU kernels
// (cross_entropy_op.cc, which holds the contract) and the CUDA kernels (cross_entropy_op.cu).
#pragma once

#include "core/operator.h"

namespace caffe2 {

struct CrossEntropyShape {
  int64_t N, D;  // X as (N, D); a 1-d X is one row
};

// X 1-d or 2-d float, label float shaped like X.
inline CrossEntropyShape CheckCrossEntropyInputs(const Tensor& X, const Tensor& L) {
  C2_ENFORCE(X.IsType<float>() && (X.ndim() == 1 || X.ndim() == 2),
             "X must be a 1-d or 2-d float tensor, got ", X.meta().name, " ",
             Tensor::DimsString(X.dims()));
  C2_ENFORCE(L.IsType<float>() && L.dims() == X.dims(), "label must be float and shaped like X ",
             Tensor::DimsString(X.dims()), ", got ", L.meta().name, " ",
             Tensor::DimsString(L.dims()));
  return CrossEntropyShape{X.ndim() == 2 ? X.dim(0) : 1, X.ndim() == 2 ? X.dim(1) : X.dim(0)};
}

// The gradient's dY: N floats.
inline void CheckCrossEntropyGradient(const Tensor& dY, CrossEntropyShape r) {
  C2_ENFORCE(dY.IsType<float>() && dY.numel() == r.N, "dY ", Tensor::DimsString(dY.dims()),
             " must hold ", r.N, " floats");
}

}  // namespace caffe2
