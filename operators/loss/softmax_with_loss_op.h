// Arguments and input checks of SoftmaxWithLoss and SoftmaxWithLossGradient, shared by the CPU
// kernels (softmax_with_loss_op.cc, which holds the contract) and the CUDA kernels
// (softmax_with_loss_op.cu). The label values are read only when the labels live on the host: a
// CUDA op cannot read device memory here, so its kernels handle bad values (see the .cu file).
#pragma once

#include <cmath>
#include <string>

#include "core/operator.h"

namespace caffe2 {

struct SoftmaxWithLossArgs {
  float scale;
  bool label_prob;
  int axis;
};

struct SoftmaxWithLossShape {
  int64_t N, D;  // logits viewed as (N, D) at `axis`
};

inline SoftmaxWithLossArgs ReadSoftmaxWithLossArgs(const OperatorBase& op) {
  SoftmaxWithLossArgs a{op.GetSingleArgument<float>("scale", 1.0f),
                        op.GetSingleArgument<int>("label_prob", 0) != 0,
                        op.GetSingleArgument<int>("axis", 1)};
  const std::string order = op.GetSingleArgument<std::string>("order", "NCHW");
  C2_ENFORCE(order == "NCHW", "only order NCHW is supported, got ", order);
  C2_ENFORCE(a.scale >= 0, "scale must be >= 0, got ", a.scale);
  return a;
}

// Checks logits X, labels T and weights W (null without); returns N, D. With labels on the host
// it also checks their values: class ids in [0, D), or rows of probabilities summing to 1 (+-1e-5).
inline SoftmaxWithLossShape CheckSoftmaxWithLossInputs(const SoftmaxWithLossArgs& a,
                                                       const Tensor& X, const Tensor& T,
                                                       const Tensor* W) {
  C2_ENFORCE(X.IsType<float>(), "logits must be float, got ", X.meta().name);
  const int ax = a.axis < 0 ? a.axis + X.ndim() : a.axis;
  C2_ENFORCE(ax >= 0 && ax < X.ndim(), "axis ", a.axis, " out of range for logits ",
             Tensor::DimsString(X.dims()));
  const SoftmaxWithLossShape s{X.size_to_dim(ax), X.size_from_dim(ax)};
  const bool on_host = T.device().type == kCPU;
  if (a.label_prob) {
    C2_ENFORCE(T.IsType<float>() && T.numel() == s.N * s.D, "label_prob=1 needs float labels of ",
               s.N, " x ", s.D, " probabilities, got ", T.meta().name, " ",
               Tensor::DimsString(T.dims()));
    for (int64_t i = 0; on_host && i < s.N; ++i) {
      const float* t = T.data<float>() + i * s.D;
      double sum = 0;
      for (int64_t j = 0; j < s.D; ++j) sum += t[j];
      C2_ENFORCE(std::abs(sum - 1.0) < 1e-5, "label_prob row ", i, " sums to ", sum,
                 " instead of 1");
    }
  } else {
    C2_ENFORCE(T.IsType<int>(), "labels must be int32, got ", T.meta().name);
    C2_ENFORCE(T.numel() == s.N && (T.ndim() <= 1 || T.dims().back() == 1 || T.ndim() == ax),
               "labels ", Tensor::DimsString(T.dims()), " must hold one label per row of the ", s.N,
               " x ", s.D, " logits");
    for (int64_t i = 0; on_host && i < s.N; ++i) {
      const int t = T.data<int>()[i];
      C2_ENFORCE(t >= 0 && t < s.D, "label ", t, " in row ", i, " is out of range [0, ", s.D, ")");
    }
  }
  if (W) {
    C2_ENFORCE(W->IsType<float>() && W->numel() == s.N, "weights ", Tensor::DimsString(W->dims()),
               " must hold one float per row (", s.N, ")");
  }
  return s;
}

// The gradient's extra inputs: the softmax P shaped like the logits X, and dLoss one float.
inline void CheckSoftmaxWithLossGradientInputs(const Tensor& X, const Tensor& P,
                                               const Tensor& dLoss) {
  C2_ENFORCE(P.dims() == X.dims(), "softmax ", Tensor::DimsString(P.dims()),
             " must be shaped like logits ", Tensor::DimsString(X.dims()));
  C2_ENFORCE(dLoss.numel() == 1 && dLoss.IsType<float>(), "dLoss must be one float, got ",
             dLoss.DebugString());
}

}  // namespace caffe2
