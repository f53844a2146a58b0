// cuBLAS kernel of MatMul (contract in matmul_op.cc): one GEMM on the matrix views. float, and
// float16 on CUDA (computed in float).
#include "core/cuda/cuda_context.h"
#include "core/operator.h"
#include "operators/common/gemm_cuda.h"
#include "operators/tensor/matmul_op.h"

namespace caffe2 {
namespace {

class CudaMatMulOp final : public Operator<CUDAContext> {
 public:
  CudaMatMulOp(const OperatorDef& def, Workspace* ws)
      : Operator<CUDAContext>(def, ws),
        axis_a_(GetSingleArgument<int>("axis_a", 1)),
        axis_b_(GetSingleArgument<int>("axis_b", 1)),
        trans_a_(GetSingleArgument<int>("trans_a", 0) != 0),
        trans_b_(GetSingleArgument<int>("trans_b", 0) != 0) {}

  bool RunOnDevice() override {
    const Tensor& A = Input(0);
    const Tensor& B = Input(1);
    const DataType type = CudaGemmInputType(A, B);
    const MatMulShape m = ComputeMatMulShape(A, B, axis_a_, axis_b_, trans_a_, trans_b_);
    Tensor* Y = Output(0);
    Y->Resize(m.M, m.N);
    CudaGemm(&context_, type, trans_a_, trans_b_, m.M, m.N, m.K, 1.f, A.raw_data(), m.ac,
             B.raw_data(), m.bc, 0.f, Y->raw_mutable_data(A.meta()), m.N);
    return true;
  }

 private:
  int axis_a_, axis_b_;
  bool trans_a_, trans_b_;
};

}  // namespace

REGISTER_CUDA_OPERATOR(MatMul, CudaMatMulOp);

}  // namespace caffe2
