// CUDA kernels of Cube and CubeGradient: the functors of the CPU op (cube_op.cc, which holds the
// contract, schema and gradient maker).
#include "operators/common/elementwise_cuda.cuh"

namespace caffe2 {

REGISTER_CUDA_OPERATOR(Cube, CudaUnaryOp<functors::Cube, CudaFloatTypes>);
REGISTER_CUDA_OPERATOR(CubeGradient, CudaUnaryGradientOp<functors::CubeGradient, CudaFloatTypes>);

}  // namespace caffe2
