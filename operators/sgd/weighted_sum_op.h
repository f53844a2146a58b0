// Input checks of WeightedSum and WeightedSumGradient (contract in weighted_sum_op.cc), shared by
// the CPU kernels and the CUDA kernels (weighted_sum_op.cu). They read types and dims only, so
// they apply to tensors on any device.
#pragma once

#include "core/enforce.h"
#include "core/operator.h"
#include "core/tensor.h"

namespace caffe2 {

// WeightedSum's inputs: (X, weight) pairs, only X0 in place, float X0, every Xi shaped like X0.
inline void CheckWeightedSumInputs(const OperatorBase& op) {
  C2_ENFORCE(op.InputSize() > 0 && op.InputSize() % 2 == 0,
             "inputs must come in (X, weight) pairs, got ", op.InputSize());
  for (int i = 2; i < op.InputSize(); i += 2) {
    C2_ENFORCE(!op.IsInputOutputAlias(i, 0), "only X0 may be the output (input ", i, " is)");
  }
  const Tensor& X0 = op.Input(0);
  C2_ENFORCE(X0.IsType<float>(), "float X expected, got ", X0.meta().name);
  for (int i = 2; i < op.InputSize(); i += 2) {
    const Tensor& Xi = op.Input(i);
    C2_ENFORCE(Xi.dims() == X0.dims(), "X", i / 2, " ", Tensor::DimsString(Xi.dims()),
               " does not match X0 ", Tensor::DimsString(X0.dims()));
    C2_ENFORCE(Xi.IsType<float>(), "X", i / 2, " must be float, got ", Xi.meta().name);
  }
}

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
