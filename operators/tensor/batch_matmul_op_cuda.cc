// cuBLAS kernel of BatchMatMul (contract in batch_matmul_op.cc): one strided batched GEMM, or
// with broadcast batch dims one GEMM per product. float, and float16 on CUDA (computed in float).
#include "core/cuda/cuda_context.h"
#include "core/operator.h"
#include "operators/common/gemm_cuda.h"
#include "operators/tensor/batch_matmul_op.h"

namespace caffe2 {
namespace {

class CudaBatchMatMulOp final : public Operator<CUDAContext> {
 public:
  CudaBatchMatMulOp(const OperatorDef& def, Workspace* ws)
      : Operator<CUDAContext>(def, ws),
        trans_a_(GetSingleArgument<int>("trans_a", 0) != 0),
        trans_b_(GetSingleArgument<int>("trans_b", 0) != 0),
        broadcast_(GetSingleArgument<int>("broadcast", 0) != 0) {}

  bool RunOnDevice() override {
    const Tensor& A = Input(0);
    const Tensor& B = Input(1);
    const DataType type = CudaGemmInputType(A, B);
    const BatchMatMulPlan p = PlanBatchMatMul(A.dims(), B.dims(), trans_a_, trans_b_, broadcast_);
    Tensor* Y = Output(0);
    Y->Resize(p.out_dims);
    const size_t item = A.itemsize();
    const char* a = static_cast<const char*>(A.raw_data());
    const char* b = static_cast<const char*>(B.raw_data());
    char* y = static_cast<char*>(Y->raw_mutable_data(A.meta()));
    const int64_t lda = trans_a_ ? p.M : p.K, ldb = trans_b_ ? p.K : p.N;
    if (p.plain) {
      CudaGemmStridedBatched(&context_, type, trans_a_, trans_b_, p.M, p.N, p.K, 1.f, a, lda,
                             p.M * p.K, b, ldb, p.K * p.N, 0.f, y, p.N, p.M * p.N, p.count);
      return true;
    }
    for (int64_t t = 0; t < p.count; ++t) {
      int64_t oa, ob;
      p.Offsets(t, &oa, &ob);
      CudaGemm(&context_, type, trans_a_, trans_b_, p.M, p.N, p.K, 1.f, a + oa * p.M * p.K * item,
               lda, b + ob * p.K * p.N * item, ldb, 0.f, y + t * p.M * p.N * item, p.N);
    }
    return true;
  }

 private:
  bool trans_a_, trans_b_, broadcast_;
};

}  // namespace

REGISTER_CUDA_OPERATOR(BatchMatMul, CudaBatchMatMulOp);

}  // namespace caffe2
