// CUDA registrations of Squeeze and ExpandDims (contracts in squeeze_op.h): the data moves by a
// device-to-device copy on the op's stream (none in place).
#include "operators/shape/squeeze_op.h"
#include "operators/tensor/tensor_util_cuda.h"

namespace caffe2 {

REGISTER_CUDA_OPERATOR(Squeeze, SqueezeOp<CUDAContext, true>);
REGISTER_CUDA_OPERATOR(ExpandDims, SqueezeOp<CUDAContext, false>);

}  // namespace caffe2
