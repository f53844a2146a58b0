// The CUDA registrations of GivenTensorFill and its typed variants (contracts in
// given_tensor_fill_op.cc). Fillers are device-generic (filler_op.h): they fill on the host and
// copy the result to the op's GPU.
#include "operators/fill/given_tensor_fill_op.h"

namespace caffe2 {

REGISTER_CUDA_OPERATOR(GivenTensorFill, GivenTensorFillOp<DataType::FLOAT>);
REGISTER_CUDA_OPERATOR(GivenTensorDoubleFill, GivenTensorFillOp<DataType::DOUBLE>);
REGISTER_CUDA_OPERATOR(GivenTensorBoolFill, GivenTensorFillOp<DataType::BOOL>);
REGISTER_CUDA_OPERATOR(GivenTensorIntFill, GivenTensorFillOp<DataType::INT32>);
REGISTER_CUDA_OPERATOR(GivenTensorInt64Fill, GivenTensorFillOp<DataType::INT64>);

}  // namespace caffe2
