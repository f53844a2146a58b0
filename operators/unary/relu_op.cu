// CUDA kernels of Relu and ReluGradient: the functors of the CPU op (relu_op.cc, which holds the
// contract, schema and gradient maker).
#include "operators/common/elementwise_cuda.cuh"

namespace caffe2 {

REGISTER_CUDA_OPERATOR(Relu, CudaUnaryOp<functors::Relu, CudaFloatTypes>);
REGISTER_CUDA_OPERATOR(ReluGradient, CudaUnaryGradientOp<functors::ReluGradient, CudaFloatTypes>);

}  // namespace caffe2
