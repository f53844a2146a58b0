#include "operators/common/gemm_cuda.h"

#include <limits>
#include <vector>

#include "core/cuda/cuda_check.h"
#include "core/tensor.h"

namespace caffe2 {
namespace {

int Int(int64_t v, const char* what) {
  C2_ENFORCE(v >= 0 && v <= std::numeric_limits<int>::max(), "cuBLAS ", what, " ", v,
             " does not fit in an int");
  return static_cast<int>(v);
}

cublasOperation_t Op(bool trans) { return trans ? CUBLAS_OP_T : CUBLAS_OP_N; }

}  // namespace

void CudaSgemm(CUDAContext* context, bool trans_a, bool trans_b, int64_t M, int64_t N, int64_t K,
               float alpha, const float* A, int64_t lda, const float* B, int64_t ldb, float beta,
               float* C, int64_t ldc) {
  if (M == 0 || N == 0) return;
  C2_CUBLAS_CHECK(cublasSgemm(context->cublas_handle(), Op(trans_b), Op(trans_a), Int(N, "N"),
                              Int(M, "M"), Int(K, "K"), &alpha, B, Int(ldb, "ldb"), A,
                              Int(lda, "lda"), &beta, C, Int(ldc, "ldc")));
}

void CudaSgemmStridedBatched(CUDAContext* context, bool trans_a, bool trans_b, int64_t M,
                             int64_t N, int64_t K, float alpha, const float* A, int64_t lda,
                             int64_t stride_a, const float* B, int64_t ldb, int64_t stride_b,
                             float beta, float* C, int64_t ldc, int64_t stride_c, int64_t batch) {
  if (M == 0 || N == 0 || batch == 0) return;
  C2_CUBLAS_CHECK(cublasSgemmStridedBatched(
      context->cublas_handle(), Op(trans_b), Op(trans_a), Int(N, "N"), Int(M, "M"), Int(K, "K"),
      &alpha, B, Int(ldb, "ldb"), stride_b, A, Int(lda, "lda"), stride_a, &beta, C,
      Int(ldc, "ldc"), stride_c, Int(batch, "batch")));
}

void CudaSgemv(CUDAContext* context, bool trans, int64_t M, int64_t N, float alpha, const float* A,
               const float* x, float beta, float* y) {
  if (M == 0 || N == 0) return;
  // Row-major A (M x N) is column-major A^T (N x M): op(A) x = (A^T)^T x, so flip `trans`.
  C2_CUBLAS_CHECK(cublasSgemv(context->cublas_handle(), trans ? CUBLAS_OP_N : CUBLAS_OP_T,
                              Int(N, "N"), Int(M, "M"), &alpha, A, Int(N, "lda"), x, 1, &beta, y,
                              1));
}

const float* CudaOnes(CUDAContext* context, int64_t n, Tensor* cache) {
  if (cache->numel() < n || cache->device() != context->device()) {
    Tensor host(std::vector<int64_t>{n}, Device{kCPU, 0});
    std::vector<float> ones(n, 1.f);
    std::copy(ones.begin(), ones.end(), host.mutable_data<float>());
    cache->SetDevice(context->device());
    cache->CopyFrom(host);
  }
  return cache->data<float>();
}

}  // namespace caffe2
