// Arguments and input checks of Accuracy, shared by the CPU kernel (accuracy_op.cc, which holds
// the contract) and the CUDA kernel (accuracy_op.cu). The label values are read only when the
// labels live on the host: a CUDA op cannot read device memory here, so its kernel handles bad
// values (see the .cu file).
#pragma once

#include "core/operator.h"

namespace caffe2 {

struct AccuracyShape {
  int64_t N, D;
};

inline int ReadAccuracyTopK(const OperatorBase& op) {
  const int top_k = op.GetSingleArgument<int>("top_k", 1);
  C2_ENFORCE(top_k >= 1, "top_k must be >= 1, got ", top_k);
  return top_k;
}

// prediction P (N, D) float, label L (N) or (N, 1) int32, top_k <= D; with labels on the host,
// each in [0, D).
inline AccuracyShape CheckAccuracyInputs(const Tensor& P, const Tensor& L, int top_k) {
  C2_ENFORCE(P.IsType<float>() && P.ndim() == 2, "prediction must be a 2-d float tensor, got ",
             P.meta().name, " ", Tensor::DimsString(P.dims()));
  const AccuracyShape s{P.dim(0), P.dim(1)};
  C2_ENFORCE(
      L.IsType<int>() && L.numel() == s.N && (L.ndim() == 1 || (L.ndim() == 2 && L.dim(1) == 1)),
      "label must be int32 (", s.N, "), got ", L.meta().name, " ", Tensor::DimsString(L.dims()));
  C2_ENFORCE(top_k <= s.D, "top_k ", top_k, " exceeds the number of classes ", s.D);
  if (L.device().type != kCPU) return s;
  const int* l = L.data<int>();
  for (int64_t i = 0; i < s.N; ++i) {
    C2_ENFORCE(l[i] >= 0 && l[i] < s.D, "label ", l[i], " in row ", i, " is out of range [0, ", s.D,
               ")");
  }
  return s;
}

}  // namespace caffe2
