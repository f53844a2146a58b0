// CUDA kernels of Log: the functors of the CPU op (log_op.cc, which holds the contract, schema and
// gradient maker).
#include "operators/common/elementwise_cuda.cuh"

namespace caffe2 {

REGISTER_CUDA_OPERATOR(Log, CudaUnaryOp<functors::Log, CudaFloatTypes>);

}  // namespace caffe2
