#include "operators/common/gemm_cuda.h"

#include <limits>
#include <vector>

#include "core/cuda/cuda_check.h"

namespace caffe2 {
namespace {

int Int(int64_t v, const char* what) {
  C2_ENFORCE(v >= 0 && v <= std::numeric_limits<int>::max(), "cuBLAS ", what, " ", v,
             " does not fit in an int");
  return static_cast<int>(v);
}

cublasOperation_t Op(bool trans) { return trans ? CUBLAS_OP_T : CUBLAS_OP_N; }

// A leading dimension of 0 (K == 0: an empty product, nothing read) is given to cuBLAS as 1, the
// least it accepts; it then computes C = beta * C, as the BLAS contract says for k = 0.
int64_t LeadingDim(int64_t ld) { return ld < 1 ? 1 : ld; }

cudaDataType_t CudaType(DataType type) {
  C2_ENFORCE(type == DataType::FLOAT || type == DataType::FLOAT16,
             "cuBLAS GEMMs take float or float16 tensors, got ", TypeMeta::FromDataType(type).name);
  return type == DataType::FLOAT ? CUDA_R_32F : CUDA_R_16F;
}

}  // namespace

DataType CudaGemmInputType(const Tensor& A, const Tensor& B) {
  C2_ENFORCE((A.IsType<float>() || A.IsType<float16>()) && A.meta() == B.meta(),
             "A and B must both be float (or float16 on CUDA), got ", A.meta().name, " and ",
             B.meta().name);
  return A.dtype();
}

void CudaGemm(CUDAContext* context, DataType type, bool trans_a, bool trans_b, int64_t M, int64_t N,
              int64_t K, float alpha, const void* A, int64_t lda, const void* B, int64_t ldb,
              float beta, void* C, int64_t ldc) {
  if (M == 0 || N == 0) return;
  const cudaDataType_t t = CudaType(type);
  C2_CUBLAS_CHECK(cublasGemmEx(context->cublas_handle(), Op(trans_b), Op(trans_a), Int(N, "N"),
                               Int(M, "M"), Int(K, "K"), &alpha, B, t, Int(LeadingDim(ldb), "ldb"),
                               A, t, Int(LeadingDim(lda), "lda"), &beta, C, t, Int(ldc, "ldc"),
                               CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
}

void CudaGemmStridedBatched(CUDAContext* context, DataType type, bool trans_a, bool trans_b,
                            int64_t M, int64_t N, int64_t K, float alpha, const void* A,
                            int64_t lda, int64_t stride_a, const void* B, int64_t ldb,
                            int64_t stride_b, float beta, void* C, int64_t ldc, int64_t stride_c,
                            int64_t batch) {
  if (M == 0 || N == 0 || batch == 0) return;
  const cudaDataType_t t = CudaType(type);
  C2_CUBLAS_CHECK(cublasGemmStridedBatchedEx(
      context->cublas_handle(), Op(trans_b), Op(trans_a), Int(N, "N"), Int(M, "M"), Int(K, "K"),
      &alpha, B, t, Int(LeadingDim(ldb), "ldb"), stride_b, A, t, Int(LeadingDim(lda), "lda"),
      stride_a, &beta, C, t, Int(ldc, "ldc"), stride_c, Int(batch, "batch"), CUBLAS_COMPUTE_32F,
      CUBLAS_GEMM_DEFAULT));
}

const void* CudaOnes(CUDAContext* context, DataType type, int64_t n, Tensor* cache) {
  if (cache->numel() < n || cache->dtype() != type || cache->device() != context->device()) {
    Tensor host(std::vector<int64_t>{n}, Device{kCPU, 0});
    if (type == DataType::FLOAT16) {
      std::fill_n(host.mutable_data<float16>(), n, FloatToHalf(1.f));
    } else {
      std::fill_n(host.mutable_data<float>(), n, 1.f);
    }
    cache->SetDevice(context->device());
    cache->CopyFrom(host);
  }
  return cache->raw_data();
}

}  // namespace caffe2
