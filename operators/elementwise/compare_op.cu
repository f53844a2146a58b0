// CUDA kernels of the comparisons LT, LE, GT, GE and EQ (legacy broadcast of B; bool outputs): the
// functors of the CPU op (compare_op.cc, which holds the contract and schema; they have no
// gradient).
#include "operators/common/elementwise_cuda.cuh"

namespace caffe2 {

REGISTER_CUDA_OPERATOR(LT, CudaBinaryOp<functors::LT, CudaNumericAndBoolTypes, true>);
REGISTER_CUDA_OPERATOR(LE, CudaBinaryOp<functors::LE, CudaNumericAndBoolTypes, true>);
REGISTER_CUDA_OPERATOR(GT, CudaBinaryOp<functors::GT, CudaNumericAndBoolTypes, true>);
REGISTER_CUDA_OPERATOR(GE, CudaBinaryOp<functors::GE, CudaNumericAndBoolTypes, true>);
REGISTER_CUDA_OPERATOR(EQ, CudaBinaryOp<functors::EQ, CudaNumericAndBoolTypes, true>);

}  // namespace caffe2
