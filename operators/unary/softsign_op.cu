// CUDA kernels of Softsign and SoftsignGradient: the functors of the CPU op (softsign_op.cc, which
// holds the contract, schema and gradient maker).
#include "operators/common/elementwise_cuda.cuh"

namespace caffe2 {

REGISTER_CUDA_OPERATOR(Softsign, CudaUnaryOp<functors::Softsign, CudaFloatTypes>);
REGISTER_CUDA_OPERATOR(SoftsignGradient,
                       CudaUnaryGradientOp<functors::SoftsignGradient, CudaFloatTypes>);

}  // namespace caffe2
