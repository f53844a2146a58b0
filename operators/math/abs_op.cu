// CUDA kernels of Abs (numeric types) and AbsGradient: the functors of the CPU op (abs_op.cc, which
// holds the contract, schema and gradient maker).
#include "operators/common/elementwise_cuda.cuh"

namespace caffe2 {

REGISTER_CUDA_OPERATOR(Abs, CudaUnaryOp<functors::Abs, CudaNumericTypes>);
REGISTER_CUDA_OPERATOR(AbsGradient, CudaUnaryGradientOp<functors::AbsGradient, CudaFloatTypes>);

}  // namespace caffe2
