// Input checks of SquaredL2Distance and SquaredL2DistanceGradient, shared by the CPU kernels
// (squared_l2_distance_op.cc, which holds the contract) and the CUDA kernels
// (squared_l2_distance_op.cu).
#pragma once

#include "core/operator.h"

namespace caffe2 {

struct SquaredL2DistanceShape {
  int64_t n, d;  // rows (dim 0; 1 for a 0-d input) and the elements per row
};

// X and Y: float, the same shape.
inline SquaredL2DistanceShape CheckSquaredL2DistanceInputs(const Tensor& X, const Tensor& Y) {
  C2_ENFORCE(X.dims() == Y.dims(), "X ", Tensor::DimsString(X.dims()), " and Y ",
             Tensor::DimsString(Y.dims()), " must have the same shape");
  C2_ENFORCE(X.IsType<float>() && Y.IsType<float>(), "float inputs expected, got ", X.meta().name,
             " and ", Y.meta().name);
  const int64_t n = X.ndim() > 0 ? X.dim(0) : 1;
  return SquaredL2DistanceShape{n, n > 0 ? X.numel() / n : 0};
}

// The gradient's dZ: one value per row.
inline void CheckSquaredL2DistanceGradient(const Tensor& dZ, SquaredL2DistanceShape s) {
  C2_ENFORCE(dZ.numel() == s.n, "dZ ", Tensor::DimsString(dZ.dims()), " must hold ", s.n,
             " values");
}

}  // namespace caffe2
