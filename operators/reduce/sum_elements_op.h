// The input checks SumElements, SumSqrElements and SumElementsGradient share on every device
// (contracts in sum_elements_op.cc and sum_sqr_elements_op.cc; CUDA kernels in
// sum_elements_cuda.cuh and sum_elements_op.cu).
#pragma once

#include "core/tensor.h"

namespace caffe2 {

// `average` divides by the element count, so it needs at least one element.
inline void CheckSumElementsAverage(const Tensor& X, bool average) {
  C2_ENFORCE(!average || X.numel() > 0, "cannot average an empty tensor ",
             Tensor::DimsString(X.dims()));
}

// SumElementsGradient's dSum: one float.
inline void CheckSumElementsGradient(const Tensor& dSum) {
  C2_ENFORCE(dSum.IsType<float>() && dSum.numel() == 1, "dSum must be one float, got ",
             dSum.DebugString());
}

}  // namespace caffe2
