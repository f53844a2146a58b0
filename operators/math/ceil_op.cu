// CUDA kernel of Ceil: the functor of the CPU op (ceil_op.cc, which holds the contract and schema).
#include "operators/common/elementwise_cuda.cuh"

namespace caffe2 {

REGISTER_CUDA_OPERATOR(Ceil, CudaUnaryOp<functors::Ceil, CudaFloatTypes>);

}  // namespace caffe2
