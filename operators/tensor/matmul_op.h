// The matrix views of MatMul (contract in matmul_op.cc), shared by the CPU and CUDA kernels: A as
// (ar, ac) split at axis_a, B as (br, bc) split at axis_b, Y = op(A) op(B) of (M, N) with inner K.
#pragma once

#include "core/tensor.h"

namespace caffe2 {

struct MatMulShape {
  int64_t ar, ac, br, bc, M, K, N;
};

// axis_a / axis_b as a split point in [0, ndim]; a negative axis counts from the end, as upstream's
// (-1 splits off the last dim). -1 when it is out of range.
inline int MatMulSplitAxis(int axis, int ndim) {
  const int split = axis < 0 ? axis + ndim : axis;
  return split >= 0 && split <= ndim ? split : -1;
}

inline MatMulShape ComputeMatMulShape(const Tensor& A, const Tensor& B, int axis_a_arg,
                                      int axis_b_arg, bool trans_a, bool trans_b) {
  const int axis_a = MatMulSplitAxis(axis_a_arg, A.ndim());
  const int axis_b = MatMulSplitAxis(axis_b_arg, B.ndim());
  C2_ENFORCE(axis_a >= 0, "axis_a ", axis_a_arg, " out of range for A ",
             Tensor::DimsString(A.dims()));
  C2_ENFORCE(axis_b >= 0, "axis_b ", axis_b_arg, " out of range for B ",
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
