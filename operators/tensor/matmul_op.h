// The matrix views of MatMul (contract in matmul_op.cc), shared by the CPU and CUDA kernels: A as
// (ar, ac) split at axis_a, B as (br, bc) split at axis_b, Y = op(A) op(B) of (M, N) with inner K.
#pragma once

#include "core/tensor.h"

namespace caffe2 {

struct MatMulShape {
  int64_t ar, ac, br, bc, M, K, N;
};

inline MatMulShape ComputeMatMulShape(const Tensor& A, const Tensor& B, int axis_a, int axis_b,
                                      bool trans_a, bool trans_b) {
  C2_ENFORCE(axis_a >= 0 && axis_a <= A.ndim(), "axis_a ", axis_a, " out of range for A ",
             Tensor::DimsString(A.dims()));
  C2_ENFORCE(axis_b >= 0 && axis_b <= B.ndim(), "axis_b ", axis_b, " out of range for B ",
             Tensor::DimsString(B.dims()));
  const int64_t ar = A.size_to_dim(axis_a), ac = A.size_from_dim(axis_a);
  const int64_t br = B.size_to_dim(axis_b), bc = B.size_from_dim(axis_b);
  const int64_t M = trans_a ? ac : ar, K = trans_a ? ar : ac;
  const int64_t KB = trans_b ? bc : br, N = trans_b ? br : bc;
  C2_ENFORCE(K == KB, "A ", Tensor::DimsString(A.dims()), " gives inner dim ", K, " but B ",
             Tensor::DimsString(B.dims()), " gives ", KB, " (trans_a=", trans_a,
             ", trans_b=", trans_b, ")");
  return MatMulShape{ar, ac, br, bc, M, K, N};
}

}  // namespace caffe2
