// CUDA registration of Reshape (contract in reshape_op.h): the data moves by a device-to-device
// copy on the op's stream (none in place); old_shape is written on the host.
#include "operators/shape/reshape_op.h"
#include "operators/tensor/tensor_util_cuda.h"

namespace caffe2 {

REGISTER_CUDA_OPERATOR(Reshape, ReshapeOp<CUDAContext>);

}  // namespace caffe2
