// CUDA kernels of Sin and SinGradient: the functors of the CPU op (sin_op.cc, which holds the
// contract, schema and gradient maker).
#include "operators/common/elementwise_cuda.cuh"

namespace caffe2 {

REGISTER_CUDA_OPERATOR(Sin, CudaUnaryOp<functors::Sin, CudaFloatTypes>);
REGISTER_CUDA_OPERATOR(SinGradient, CudaUnaryGradientOp<functors::SinGradient, CudaFloatTypes>);

}  // namespace caffe2
