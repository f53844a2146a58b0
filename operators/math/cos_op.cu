// CUDA kernels of Cos and CosGradient: the functors of the CPU op (cos_op.cc, which holds the
// contract, schema and gradient maker).
#include "operators/common/elementwise_cuda.cuh"

namespace caffe2 {

REGISTER_CUDA_OPERATOR(Cos, CudaUnaryOp<functors::Cos, CudaFloatTypes>);
REGISTER_CUDA_OPERATOR(CosGradient, CudaUnaryGradientOp<functors::CosGradient, CudaFloatTypes>);

}  // namespace caffe2
