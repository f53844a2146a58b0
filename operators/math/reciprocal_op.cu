// CUDA kernels of Reciprocal and ReciprocalGradient: the functors of the CPU op (reciprocal_op.cc,
// which holds the contract, schema and gradient maker).
#include "operators/common/elementwise_cuda.cuh"

namespace caffe2 {

REGISTER_CUDA_OPERATOR(Reciprocal, CudaUnaryOp<functors::Reciprocal, CudaFloatTypes>);
REGISTER_CUDA_OPERATOR(ReciprocalGradient,
                       CudaUnaryGradientOp<functors::ReciprocalGradient, CudaFloatTypes>);

}  // namespace caffe2
