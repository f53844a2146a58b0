#include <Eigen/Core>

#include "operators/common/gemm.h"
#include "operators/common/parallel_for.h"

namespace caffe2 {
namespace {

using RowMajor = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
using ConstMap = Eigen::Map<const RowMajor, 0, Eigen::OuterStride<>>;
using Map = Eigen::Map<RowMajor, 0, Eigen::OuterStride<>>;

}  // namespace

void CpuSgemm(bool trans_a, bool trans_b, int64_t M, int64_t N, int64_t K, float alpha,
              const float* A, int64_t lda, const float* B, int64_t ldb, float beta, float* C,
              int64_t ldc) {
  if (M == 0 || N == 0) return;
  const ConstMap b(B, trans_b ? N : K, trans_b ? K : N, Eigen::OuterStride<>(ldb));
  ParallelFor(M, KernelWorkers(M, 2.0 * M * N * K), [&](int64_t m0, int64_t m1, int) {
    // Rows m0..m1 of op(A): rows of A, or columns of A^T.
    const ConstMap a = trans_a ? ConstMap(A + m0, K, m1 - m0, Eigen::OuterStride<>(lda))
                               : ConstMap(A + m0 * lda, m1 - m0, K, Eigen::OuterStride<>(lda));
    Map c(C + m0 * ldc, m1 - m0, N, Eigen::OuterStride<>(ldc));
    if (beta == 0.f) {
      if (trans_a && trans_b)
        c.noalias() = alpha * (a.transpose() * b.transpose());
      else if (trans_a)
        c.noalias() = alpha * (a.transpose() * b);
      else if (trans_b)
        c.noalias() = alpha * (a * b.transpose());
      else
        c.noalias() = alpha * (a * b);
      return;
    }
    if (beta != 1.f) c *= beta;
    if (trans_a && trans_b)
      c.noalias() += alpha * (a.transpose() * b.transpose());
    else if (trans_a)
      c.noalias() += alpha * (a.transpose() * b);
    else if (trans_b)
      c.noalias() += alpha * (a * b.transpose());
    else
      c.noalias() += alpha * (a * b);
  });
}

}  // namespace caffe2
