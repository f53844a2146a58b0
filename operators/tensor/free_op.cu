// CUDA registration of Free (device-generic class in free_op.h).
#include "operators/tensor/free_op.h"

namespace caffe2 {

REGISTER_CUDA_OPERATOR(Free, FreeOp);

}  // namespace caffe2
