// The input check NHWC2NCHW and NCHW2NHWC share on every device (contract in order_switch_op.cc,
// CUDA kernels in order_switch_op.cu).
#pragma once

#include "core/tensor.h"

namespace caffe2 {

inline void CheckOrderSwitchInput(const Tensor& X) {
  C2_ENFORCE(X.ndim() == 4, "X must be 4-D, got ", Tensor::DimsString(X.dims()));
}

}  // namespace caffe2
