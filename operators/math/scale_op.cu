// CUDA kernel of Scale: the functor and `scale` argument of the CPU op (scale_op.cc, which holds
// the contract, schema and gradient maker).
#include "operators/common/elementwise_cuda.cuh"
#include "operators/unary/unary_args.h"

namespace caffe2 {
namespace {

class CudaScaleOp final : public CudaUnaryOp<functors::Scale, CudaFloatTypes> {
 public:
  CudaScaleOp(const OperatorDef& def, Workspace* ws) : CudaUnaryOp(def, ws, {ReadScale(def)}) {}
};

}  // namespace

REGISTER_CUDA_OPERATOR(Scale, CudaScaleOp);

}  // namespace caffe2
