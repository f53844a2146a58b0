// CUDA kernels of Elu and EluGradient: the functors and `alpha` argument of the CPU op (elu_op.cc,
// which holds the contract, schema and gradient maker).
#include "operators/common/elementwise_cuda.cuh"
#include "operators/unary/unary_args.h"

namespace caffe2 {
namespace {

class CudaEluOp final : public CudaUnaryOp<functors::Elu, CudaFloatTypes> {
 public:
  CudaEluOp(const OperatorDef& def, Workspace* ws) : CudaUnaryOp(def, ws, {ReadEluAlpha(def)}) {}
};

class CudaEluGradientOp final : public CudaUnaryGradientOp<functors::EluGradient, CudaFloatTypes> {
 public:
  CudaEluGradientOp(const OperatorDef& def, Workspace* ws)
      : CudaUnaryGradientOp(def, ws, {ReadEluAlpha(def)}) {}
};

}  // namespace

REGISTER_CUDA_OPERATOR(Elu, CudaEluOp);
REGISTER_CUDA_OPERATOR(EluGradient, CudaEluGradientOp);

}  // namespace caffe2
