// CUDA kernels of Softplus and SoftplusGradient: the functors of the CPU op (softplus_op.cc, which
// holds the contract, schema and gradient maker).
#include "operators/common/elementwise_cuda.cuh"

namespace caffe2 {

REGISTER_CUDA_OPERATOR(Softplus, CudaUnaryOp<functors::Softplus, CudaFloatTypes>);
REGISTER_CUDA_OPERATOR(SoftplusGradient,
                       CudaUnaryGradientOp<functors::SoftplusGradient, CudaFloatTypes>);

}  // namespace caffe2
