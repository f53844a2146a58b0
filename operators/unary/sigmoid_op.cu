// CUDA kernels of Sigmoid and SigmoidGradient: the functors of the CPU op (sigmoid_op.cc, which
// holds the contract, schema and gradient maker).
#include "operators/common/elementwise_cuda.cuh"

namespace caffe2 {

REGISTER_CUDA_OPERATOR(Sigmoid, CudaUnaryOp<functors::Sigmoid, CudaFloatTypes>);
REGISTER_CUDA_OPERATOR(SigmoidGradient,
                       CudaUnaryGradientOp<functors::SigmoidGradient, CudaFloatTypes>);

}  // namespace caffe2
