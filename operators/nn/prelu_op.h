// The channel layout of PRelu and its gradient (contract in prelu_op.cc), shared by the CPU and
// CUDA kernels: element i uses slope channel (i / inner) % C.
#pragma once

#include <string>

#include "core/tensor.h"

namespace caffe2 {

struct PReluLayout {
  int64_t C;      // slope channels (1 when shared)
  int64_t inner;  // elements per channel run (NCHW spatial size, 1 for NHWC)
};

inline void CheckPReluOrder(const std::string& order) {
  C2_ENFORCE(order == "NCHW" || order == "NHWC", "order must be NCHW or NHWC, got '", order, "'");
}

inline PReluLayout CheckPReluInputs(const Tensor& X, const Tensor& slope, bool nchw) {
  C2_ENFORCE(X.IsType<float>() && slope.IsType<float>(), "X and slope must be float, got ",
             X.meta().name, " and ", slope.meta().name);
  if (slope.numel() == 1) return PReluLayout{1, X.numel()};
  C2_ENFORCE(X.ndim() >= 2, "a per-channel slope needs X of rank >= 2, got ",
             Tensor::DimsString(X.dims()));
  const int64_t C = nchw ? X.dim(1) : X.dim(X.ndim() - 1);
  C2_ENFORCE(slope.numel() == C, "slope ", Tensor::DimsString(slope.dims()),
             " must hold 1 or C = ", C, " values for X ", Tensor::DimsString(X.dims()));
  return PReluLayout{C, nchw ? X.size_from_dim(2) : 1};
}

// PReluGradient's dY: shaped like X.
inline void CheckPReluGradient(const Tensor& dY, const Tensor& X) {
  C2_ENFORCE(dY.dims() == X.dims(), "dY ", Tensor::DimsString(dY.dims()), " must be shaped like X ",
             Tensor::DimsString(X.dims()));
}

}  // namespace caffe2
