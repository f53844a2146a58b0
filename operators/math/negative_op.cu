// CUDA kernels of Negative (numeric types): the functors of the CPU op (negative_op.cc, which holds
// the contract, schema and gradient maker).
#include "operators/common/elementwise_cuda.cuh"

namespace caffe2 {

REGISTER_CUDA_OPERATOR(Negative, CudaUnaryOp<functors::Negative, CudaNumericTypes>);

}  // namespace caffe2
