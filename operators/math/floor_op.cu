// CUDA kernel of Floor: the functor of the CPU op (floor_op.cc, which holds the contract and
// schema).
#include "operators/common/elementwise_cuda.cuh"

namespace caffe2 {

REGISTER_CUDA_OPERATOR(Floor, CudaUnaryOp<functors::Floor, CudaFloatTypes>);

}  // namespace caffe2
