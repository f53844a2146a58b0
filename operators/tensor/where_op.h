// Where: [C (bool), X, Y] -> [Z], Z = C ? X : Y elementwise (spec ops §1.3). X and Y share dims and
// type; C has their dims, or with broadcast_on_rows=1 is 1-D with one entry per row (dim 0).
// Allow in-place {1->0, 2->0}. SHOULD_NOT_DO_GRADIENT.
#pragma once

#include "operators/tensor/tensor_util.h"

namespace caffe2 {

// Checks the inputs; returns how many consecutive elements of X share one entry of C (1 unless
// on_rows).
inline int64_t WhereBlock(const Tensor& C, const Tensor& X, const Tensor& Y, bool on_rows) {
  C2_ENFORCE(C.IsType<bool>(), "C must be a bool tensor, got ", C.DebugString());
  C2_ENFORCE(X.dims() == Y.dims() && X.meta() == Y.meta(), "X ", X.DebugString(), " and Y ",
             Y.DebugString(), " must have the same shape and type");
  if (!on_rows) {
    C2_ENFORCE(C.dims() == X.dims(), "C ", Tensor::DimsString(C.dims()),
               " must have the dims of X ", Tensor::DimsString(X.dims()));
    return 1;
  }
  C2_ENFORCE(C.ndim() == 1 && X.ndim() >= 1 && C.dim(0) == X.dim(0), "with broadcast_on_rows C ",
             Tensor::DimsString(C.dims()), " must hold one value per row of X ",
             Tensor::DimsString(X.dims()));
  return X.size_from_dim(1);
}

}  // namespace caffe2
