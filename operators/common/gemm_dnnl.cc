#include <oneapi/dnnl/dnnl.h>

#include "core/enforce.h"
#include "operators/common/gemm.h"
#include "operators/common/parallel_for.h"

namespace caffe2 {

void CpuSgemm(bool trans_a, bool trans_b, int64_t M, int64_t N, int64_t K, float alpha,
              const float* A, int64_t lda, const float* B, int64_t ldb, float beta, float* C,
              int64_t ldc) {
  if (M == 0 || N == 0) return;
  if (K == 0) {  // op(A) op(B) is all zeros, and dnnl_sgemm refuses the leading dimensions of 0
    for (int64_t m = 0; m < M; ++m) {
      float* row = C + m * ldc;
      for (int64_t n = 0; n < N; ++n) row[n] = beta == 0.f ? 0.f : beta * row[n];
    }
    return;
  }
  KernelThreadsScope threads;
  const dnnl_status_t status = dnnl_sgemm(trans_a ? 'T' : 'N', trans_b ? 'T' : 'N', M, N, K, alpha,
                                          A, lda, B, ldb, beta, C, ldc);
  C2_ENFORCE(status == dnnl_success, "[CpuSgemm] dnnl_sgemm failed with status ",
             static_cast<int>(status), " for M ", M, " N ", N, " K ", K, " lda ", lda, " ldb ", ldb,
             " ldc ", ldc);
}

}  // namespace caffe2
