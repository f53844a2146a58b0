// CUDA registrations of Flatten, FlattenToVec and ResizeLike (contracts in flatten_op.h): the data
// moves by a device-to-device copy on the op's stream (none in place).
#include "operators/shape/flatten_op.h"
#include "operators/tensor/tensor_util_cuda.h"

namespace caffe2 {

REGISTER_CUDA_OPERATOR(Flatten, FlattenOp<CUDAContext>);
REGISTER_CUDA_OPERATOR(FlattenToVec, FlattenToVecOp<CUDAContext>);
REGISTER_CUDA_OPERATOR(ResizeLike, ResizeLikeOp<CUDAContext>);

}  // namespace caffe2
