// The CUDA registrations of the random fills (contracts in random_fill_op.cc). Fillers are
// device-generic (filler_op.h): they draw on the host, seeded by DeviceOption.random_seed as on the
// CPU, and copy the result to the op's GPU. UniqueUniformFill runs its CPU kernel
// (REGISTER_GPU_FALLBACK in random_fill_op.cc).
#include "operators/fill/random_fill_op.h"

namespace caffe2 {

REGISTER_CUDA_OPERATOR(GaussianFill, GaussianFillOp);
REGISTER_CUDA_OPERATOR(UniformFill, UniformFillOp<float>);
REGISTER_CUDA_OPERATOR(UniformIntFill, UniformFillOp<int32_t>);
REGISTER_CUDA_OPERATOR(XavierFill, XavierFillOp);
REGISTER_CUDA_OPERATOR(MSRAFill, MSRAFillOp);

}  // namespace caffe2
