// CUDA kernel of Sign: the functor of the CPU op (sign_op.cc, which holds the contract and schema).
#include "operators/common/elementwise_cuda.cuh"

namespace caffe2 {

using CudaSignTypes = TypeList<float, double, int32_t, int64_t>;
REGISTER_CUDA_OPERATOR(Sign, CudaUnaryOp<functors::Sign, CudaSignTypes>);

}  // namespace caffe2
