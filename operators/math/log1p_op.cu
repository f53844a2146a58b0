// CUDA kernels of Log1p and Log1pGradient: the functors of the CPU op (log1p_op.cc, which holds the
// contract, schema and gradient maker).
#include "operators/common/elementwise_cuda.cuh"

namespace caffe2 {

REGISTER_CUDA_OPERATOR(Log1p, CudaUnaryOp<functors::Log1p, CudaFloatTypes>);
REGISTER_CUDA_OPERATOR(Log1pGradient, CudaUnaryGradientOp<functors::Log1pGradient, CudaFloatTypes>);

}  // namespace caffe2
