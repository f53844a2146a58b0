// Input checks of WeightedSum and WeightedSumGradient (contract in weighted_sum_op.cc), shared by
// the CPU kernels and the CUDA kernels (weighted_sum_op.cu). They read types and dims only, so
// they apply to tensors on any device.
#pragma once

#include "core/enforce.h"
#include "core/tensor.h"

namespace caffe2 {

// Weight input i is a one-element float tensor.
inline void CheckWeightedSumWeight(const Tensor& w, int i) {
  C2_ENFORCE(w.numel() == 1 && w.IsType<float>(), "weight ", i,
             " must be a 1-element float tensor, got ", w.DebugString());
}

// WeightedSumGradient: one dX per (X, weight) pair, and one dw per pair with grad_on_w.
inline void CheckWeightedSumGradientOutputs(int outputs, int pairs, bool grad_on_w) {
  C2_ENFORCE(outputs == (grad_on_w ? 2 * pairs : pairs), "expected ", grad_on_w ? 2 * pairs : pairs,
             " outputs, got ", outputs);
}

// With grad_on_w, dw_i = <dY, X_i> reads n = numel(dY) values of X_i (float).
inline void CheckWeightedSumGradientX(const Tensor& Xi, int i, int64_t n) {
  C2_ENFORCE(Xi.IsType<float>() && Xi.numel() >= n, "X", i, " ", Tensor::DimsString(Xi.dims()),
             " must hold at least the ", n, " float values of dY");
}

}  // namespace caffe2
