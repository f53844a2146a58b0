// Input checks of LabelCrossEntropy and LabelCrossEntropyGradient, shared by the CPU kernels
// (label_cross_entropy_op.cc, which holds the contract) and the CUDA kernels
// (label_cross_entropy_op.cu). The label values are read only when the labels live on the host: a
// CUDA op cannot read device memory here, so its kernels handle bad values (see the .cu file).
#pragma once

#include "core/operator.h"

namespace caffe2 {

struct LabelCrossEntropyShape {
  int64_t N, D;  // X as (N, D); a 1-d X is one row
};

// X 1-d or 2-d float, label (N) or (N, 1) int32; with labels on the host, each in [0, D).
inline LabelCrossEntropyShape CheckLabelCrossEntropyInputs(const Tensor& X, const Tensor& L) {
  C2_ENFORCE(X.IsType<float>() && (X.ndim() == 1 || X.ndim() == 2),
             "X must be a 1-d or 2-d float tensor, got ", X.meta().name, " ",
             Tensor::DimsString(X.dims()));
  const LabelCrossEntropyShape r{X.ndim() == 2 ? X.dim(0) : 1, X.ndim() == 2 ? X.dim(1) : X.dim(0)};
  C2_ENFORCE(L.IsType<int>(), "label must be int32, got ", L.meta().name);
  C2_ENFORCE(
      (L.ndim() == 1 && L.dim(0) == r.N) || (L.ndim() == 2 && L.dim(0) == r.N && L.dim(1) == 1),
      "label ", Tensor::DimsString(L.dims()), " must be (", r.N, ") or (", r.N, ", 1) for X ",
      Tensor::DimsString(X.dims()));
  if (L.device().type != kCPU) return r;
  const int* l = L.data<int>();
  for (int64_t i = 0; i < r.N; ++i) {
    C2_ENFORCE(l[i] >= 0 && l[i] < r.D, "label ", l[i], " in row ", i, " is out of range [0, ", r.D,
               ")");
  }
  return r;
}

// The gradient's dY: N floats.
inline void CheckLabelCrossEntropyGradient(const Tensor& dY, LabelCrossEntropyShape r) {
  C2_ENFORCE(dY.IsType<float>() && dY.numel() == r.N, "dY ", Tensor::DimsString(dY.dims()),
             " must hold ", r.N, " floats");
}

}  // namespace caffe2
