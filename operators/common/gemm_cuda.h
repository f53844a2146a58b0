// Row-major GEMMs on the GPU through cuBLAS, on the context's stream (the same contract as
// CpuSgemm in gemm.h):  C = alpha * op(A) * op(B) + beta * C,  op(A) M x K, op(B) K x N, C M x N,
// lda/ldb/ldc the row strides as stored. cuBLAS is column-major, so these compute C^T = op(B)^T
// op(A)^T.
//   `type` is the storage of A, B and C: FLOAT or FLOAT16. The math is float either way
//   (CUBLAS_COMPUTE_32F: no TF32 for float, so results match the CPU kernels to rounding; float16
//   products accumulate in float on the tensor cores).
//   K == 0 is an empty product: C = beta * C.
//   CudaGemmStridedBatched: `batch` GEMMs with A, B, C advanced by stride_a/b/c elements.
#pragma once

#include <cstdint>

#include "core/cuda/cuda_context.h"
#include "core/tensor.h"

namespace caffe2 {

void CudaGemm(CUDAContext* context, DataType type, bool trans_a, bool trans_b, int64_t M, int64_t N,
              int64_t K, float alpha, const void* A, int64_t lda, const void* B, int64_t ldb,
              float beta, void* C, int64_t ldc);

void CudaGemmStridedBatched(CUDAContext* context, DataType type, bool trans_a, bool trans_b,
                            int64_t M, int64_t N, int64_t K, float alpha, const void* A,
                            int64_t lda, int64_t stride_a, const void* B, int64_t ldb,
                            int64_t stride_b, float beta, void* C, int64_t ldc, int64_t stride_c,
                            int64_t batch);

// The storage type of a product's A and B: both float, or both float16 (CUDA only); otherwise an
// error that names both types.
DataType CudaGemmInputType(const Tensor& A, const Tensor& B);

// A device vector of n ones of `type` (FLOAT or FLOAT16), kept in `cache` and refilled only when
// n grows or the type changes. For bias terms: Y += ones(M) b^T, db = dY^T ones(M).
const void* CudaOnes(CUDAContext* context, DataType type, int64_t n, Tensor* cache);

}  // namespace caffe2
