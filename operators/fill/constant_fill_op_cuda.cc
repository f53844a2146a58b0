// The CUDA registration of ConstantFill (contract in constant_fill_op.cc). Fillers are
// device-generic (filler_op.h): they fill on the host and copy the result to the op's GPU.
#include "operators/fill/constant_fill_op.h"

namespace caffe2 {

REGISTER_CUDA_OPERATOR(ConstantFill, ConstantFillOp);

}  // namespace caffe2
