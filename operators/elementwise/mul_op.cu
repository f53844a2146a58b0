// CUDA kernels of Mul (legacy broadcast of B, spec ops §1.2.10): the functors of the CPU op
// (mul_op.cc, which holds the contract, schema and gradient maker).
#include "operators/common/elementwise_cuda.cuh"

namespace caffe2 {

REGISTER_CUDA_OPERATOR(Mul, CudaBinaryOp<functors::Mul, CudaNumericTypes, false>);

}  // namespace caffe2
