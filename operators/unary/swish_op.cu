// CUDA kernels of Swish and SwishGradient: the functors of the CPU op (swish_op.cc, which holds the
// contract, schema and gradient maker).
#include "operators/common/elementwise_cuda.cuh"

namespace caffe2 {

REGISTER_CUDA_OPERATOR(Swish, CudaUnaryOp<functors::Swish, CudaFloatTypes>);
REGISTER_CUDA_OPERATOR(SwishGradient, CudaUnaryGradientOp<functors::SwishGradient, CudaFloatTypes,
                                                          /*kDYInput=*/2>);

}  // namespace caffe2
