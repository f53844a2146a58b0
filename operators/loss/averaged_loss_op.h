// Input checks of AveragedLoss and AveragedLossGradient, shared by the CPU kernels
// (averaged_loss_op.cc, which holds the contract) and the CUDA kernels (averaged_loss_op.cu).
#pragma once

#include "core/operator.h"

namespace caffe2 {

// X: a non-empty float tensor.
inline void CheckAveragedLossInput(const Tensor& X) {
  C2_ENFORCE(X.IsType<float>(), "float input expected, got ", X.meta().name);
  C2_ENFORCE(X.numel() > 0, "cannot average an empty tensor ", Tensor::DimsString(X.dims()));
}

// The gradient's dLoss: one float.
inline void CheckAveragedLossGradient(const Tensor& dLoss) {
  C2_ENFORCE(dLoss.numel() == 1 && dLoss.IsType<float>(), "dLoss must be one float, got ",
             dLoss.DebugString());
}

}  // namespace caffe2
