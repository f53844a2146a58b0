// CUDA kernels of the logical ops Not, And, Or and Xor (bool tensors; the binary ones with the
// legacy broadcast of B): the functors of the CPU ops (logical_op.cc, which holds the contract and
// schemas; they have no gradient).
#include "operators/common/elementwise_cuda.cuh"

namespace caffe2 {

REGISTER_CUDA_OPERATOR(Not, CudaUnaryOp<functors::Not, TypeList<bool>>);
REGISTER_CUDA_OPERATOR(And, CudaBinaryOp<functors::And, TypeList<bool>, true>);
REGISTER_CUDA_OPERATOR(Or, CudaBinaryOp<functors::Or, TypeList<bool>, true>);
REGISTER_CUDA_OPERATOR(Xor, CudaBinaryOp<functors::Xor, TypeList<bool>, true>);

}  // namespace caffe2
