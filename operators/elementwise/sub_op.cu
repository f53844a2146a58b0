// CUDA kernels of Sub (legacy broadcast of B, spec ops §1.2.10): the functors of the CPU op
// (sub_op.cc, which holds the contract, schema and gradient maker).
#include "operators/common/elementwise_cuda.cuh"

namespace caffe2 {

REGISTER_CUDA_OPERATOR(Sub, CudaBinaryOp<functors::Sub, CudaNumericTypes, false>);

}  // namespace caffe2
