// Row-major GEMMs on the GPU through cuBLAS, on the context's stream (the same contract as
// CpuSgemm in gemm.h):  C = alpha * op(A) * op(B) + beta * C,  op(A) M x K, op(B) K x N, C M x N,
// lda/ldb/ldc the row strides as stored. cuBLAS is column-major, so these compute C^T = op(B)^T
// op(A)^T. float32 math stays in float32 (cuBLAS's default math mode: no TF32), so results match
// the CPU kernels to rounding.
//   CudaSgemmStridedBatched: `batch` GEMMs with A, B, C advanced by stride_a/b/c elements.
//   CudaSgemv: y = alpha * op(A) * x + beta * y with A M x N row-major (op(A) = A^T if trans).
#pragma once

#include <cstdint>

#include "core/cuda/cuda_context.h"
#include "core/tensor.h"

namespace caffe2 {

void CudaSgemm(CUDAContext* context, bool trans_a, bool trans_b, int64_t M, int64_t N, int64_t K,
               float alpha, const float* A, int64_t lda, const float* B, int64_t ldb, float beta,
               float* C, int64_t ldc);

void CudaSgemmStridedBatched(CUDAContext* context, bool trans_a, bool trans_b, int64_t M,
                             int64_t N, int64_t K, float alpha, const float* A, int64_t lda,
                             int64_t stride_a, const float* B, int64_t ldb, int64_t stride_b,
                             float beta, float* C, int64_t ldc, int64_t stride_c, int64_t batch);

void CudaSgemv(CUDAContext* context, bool trans, int64_t M, int64_t N, float alpha, const float* A,
               const float* x, float beta, float* y);

// A device vector of n ones (for bias terms), kept in `cache` and refilled only when n grows.
const float* CudaOnes(CUDAContext* context, int64_t n, Tensor* cache);

}  // namespace caffe2
