// Row-major single-precision GEMM for CPU kernels:
//   C = alpha * op(A) * op(B) + beta * C,   op(A) M x K, op(B) K x N, C M x N,
// op(X) = X or X^T; lda, ldb, ldc are the row strides of A, B, C as stored. With beta == 0, C is
// only written (it may hold garbage). K == 0 is an empty product: C = beta * C. Two
// implementations, chosen by CMake: gemm_dnnl.cc calls oneDNN's dnnl_sgemm (JIT-compiled for the
// CPU, e.g. AVX-512, on the OpenMP pool); gemm_eigen.cc, built without oneDNN, runs Eigen's GEMM
// over row blocks of C with ParallelFor.
#pragma once

#include <cstdint>

namespace caffe2 {

void CpuSgemm(bool trans_a, bool trans_b, int64_t M, int64_t N, int64_t K, float alpha,
              const float* A, int64_t lda, const float* B, int64_t ldb, float beta, float* C,
              int64_t ldc);

}  // namespace caffe2
