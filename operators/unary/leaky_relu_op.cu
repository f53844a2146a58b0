// CUDA kernels of LeakyRelu and LeakyReluGradient: the functors and `alpha` argument of the CPU op
// (leaky_relu_op.cc, which holds the contract, schema and gradient maker).
#include "operators/common/elementwise_cuda.cuh"
#include "operators/unary/unary_args.h"

namespace caffe2 {
namespace {

class CudaLeakyReluOp final : public CudaUnaryOp<functors::LeakyRelu, CudaFloatTypes> {
 public:
  CudaLeakyReluOp(const OperatorDef& def, Workspace* ws)
      : CudaUnaryOp(def, ws, {ReadLeakyReluAlpha(def)}) {}
};

class CudaLeakyReluGradientOp final
    : public CudaUnaryGradientOp<functors::LeakyReluGradient, CudaFloatTypes> {
 public:
  CudaLeakyReluGradientOp(const OperatorDef& def, Workspace* ws)
      : CudaUnaryGradientOp(def, ws, {ReadLeakyReluAlpha(def)}) {}
};

}  // namespace

REGISTER_CUDA_OPERATOR(LeakyRelu, CudaLeakyReluOp);
REGISTER_CUDA_OPERATOR(LeakyReluGradient, CudaLeakyReluGradientOp);

}  // namespace caffe2
