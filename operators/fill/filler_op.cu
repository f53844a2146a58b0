// CUDA registrations of the fill operators. Fillers are device-generic (filler_op.h): they fill on
// the host and copy the result to the op's GPU.
#include "operators/fill/constant_fill_op.h"
#include "operators/fill/given_tensor_fill_op.h"
#include "operators/fill/random_fill_op.h"
#include "operators/fill/structured_fill_op.h"

namespace caffe2 {

REGISTER_CUDA_OPERATOR(ConstantFill, ConstantFillOp);
REGISTER_CUDA_OPERATOR(GivenTensorFill, GivenTensorFillOp<DataType::FLOAT>);
REGISTER_CUDA_OPERATOR(GivenTensorDoubleFill, GivenTensorFillOp<DataType::DOUBLE>);
REGISTER_CUDA_OPERATOR(GivenTensorBoolFill, GivenTensorFillOp<DataType::BOOL>);
REGISTER_CUDA_OPERATOR(GivenTensorIntFill, GivenTensorFillOp<DataType::INT32>);
REGISTER_CUDA_OPERATOR(GivenTensorInt64Fill, GivenTensorFillOp<DataType::INT64>);
REGISTER_CUDA_OPERATOR(GaussianFill, GaussianFillOp);
REGISTER_CUDA_OPERATOR(UniformFill, UniformFillOp<float>);
REGISTER_CUDA_OPERATOR(UniformIntFill, UniformFillOp<int32_t>);
REGISTER_CUDA_OPERATOR(XavierFill, XavierFillOp);
REGISTER_CUDA_OPERATOR(MSRAFill, MSRAFillOp);
REGISTER_CUDA_OPERATOR(RangeFill, RangeFillOp);
REGISTER_CUDA_OPERATOR(DiagonalFill, DiagonalFillOp);

}  // namespace caffe2
