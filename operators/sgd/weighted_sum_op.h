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

}  // namespace caffe2
