// CUDA kernels of Sqrt: the functors of the CPU op (sqrt_op.cc, which holds the contract, schema
// and gradient maker).
#include "operators/common/elementwise_cuda.cuh"

namespace caffe2 {

REGISTER_CUDA_OPERATOR(Sqrt, CudaUnaryOp<functors::Sqrt, CudaFloatTypes>);

}  // namespace caffe2
