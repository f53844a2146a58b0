// Arguments and input checks of SpatialSoftmaxWithLoss and its gradient, shared by the CPU kernels
// (spatial_softmax_with_loss_op.cc, which holds the contract) and the CUDA kernels
// (spatial_softmax_with_loss_op.cu). The label values are read only when the labels live on the
// host: a CUDA op cannot read device memory here, so its kernels handle bad values (see the .cu).
#pragma once

#include <string>
#include <vector>

#include "core/operator.h"

namespace caffe2 {

constexpr int kSpatialSoftmaxIgnoreLabel = -1;

// Reads `scale` (default 1) and checks that `order` is NCHW.
inline float ReadSpatialSoftmaxWithLossScale(const OperatorBase& op) {
  const std::string order = op.GetSingleArgument<std::string>("order", "NCHW");
  C2_ENFORCE(order == "NCHW", "only order NCHW is supported, got ", order);
  return op.GetSingleArgument<float>("scale", 1.0f);
}

// Logits X (N, D, H, W) float, labels T (N, H, W) int32 and weights W (N, H, W) float (null
// without); with labels on the host, every label is -1 or in [0, D).
inline void CheckSpatialSoftmaxWithLossInputs(const Tensor& X, const Tensor& T, const Tensor* W) {
  C2_ENFORCE(X.ndim() == 4 && X.IsType<float>(),
             "logits must be a 4-d (N, D, H, W) float tensor, got ", X.meta().name, " ",
             Tensor::DimsString(X.dims()));
  const std::vector<int64_t> want{X.dim(0), X.dim(2), X.dim(3)};
  C2_ENFORCE(T.IsType<int>() && T.dims() == want, "labels must be int32 ", Tensor::DimsString(want),
             " for logits ", Tensor::DimsString(X.dims()), ", got ", T.meta().name, " ",
             Tensor::DimsString(T.dims()));
  if (W) {
    C2_ENFORCE(W->IsType<float>() && W->dims() == want, "weights must be float ",
               Tensor::DimsString(want), ", got ", Tensor::DimsString(W->dims()));
  }
  if (T.device().type != kCPU) return;
  const int* t = T.data<int>();
  const int64_t D = X.dim(1);
  for (int64_t i = 0; i < T.numel(); ++i) {
    C2_ENFORCE(t[i] == kSpatialSoftmaxIgnoreLabel || (t[i] >= 0 && t[i] < D), "label ", t[i],
               " at position ", i, " is out of range [0, ", D, ") and not the ignore label -1");
  }
}

// The gradient's extra inputs: the softmax P shaped like the logits X, and dLoss one float.
inline void CheckSpatialSoftmaxWithLossGradientInputs(const Tensor& X, const Tensor& P,
                                                      const Tensor& dLoss) {
  C2_ENFORCE(P.dims() == X.dims(), "softmax ", Tensor::DimsString(P.dims()),
             " must be shaped like logits ", Tensor::DimsString(X.dims()));
  C2_ENFORCE(dLoss.numel() == 1 && dLoss.IsType<float>(), "dLoss must be one float, got ",
             dLoss.DebugString());
}

}  // namespace caffe2
