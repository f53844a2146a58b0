// CUDA kernels of Tanh and TanhGradient: the functors of the CPU op (tanh_op.cc, which holds the
// contract, schema and gradient maker).
#include "operators/common/elementwise_cuda.cuh"

namespace caffe2 {

REGISTER_CUDA_OPERATOR(Tanh, CudaUnaryOp<functors::Tanh, CudaFloatTypes>);
REGISTER_CUDA_OPERATOR(TanhGradient, CudaUnaryGradientOp<functors::TanhGradient, CudaFloatTypes>);

}  // namespace caffe2
