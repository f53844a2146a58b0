// CUDA kernels of Exp: the functors of the CPU op (exp_op.cc, which holds the contract, schema and
// gradient maker).
#include "operators/common/elementwise_cuda.cuh"

namespace caffe2 {

REGISTER_CUDA_OPERATOR(Exp, CudaUnaryOp<functors::Exp, CudaFloatTypes>);

}  // namespace caffe2
