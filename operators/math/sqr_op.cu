// CUDA kernels of Sqr: the functors of the CPU op (sqr_op.cc, which holds the contract, schema and
// gradient maker).
#include "operators/common/elementwise_cuda.cuh"

namespace caffe2 {

REGISTER_CUDA_OPERATOR(Sqr, CudaUnaryOp<functors::Sqr, CudaFloatTypes>);

}  // namespace caffe2
