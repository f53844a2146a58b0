// The CUDA registrations of RangeFill and DiagonalFill (contracts in structured_fill_op.cc).
// Fillers are device-generic (filler_op.h): they fill on the host and copy the result to the op's
// GPU. LengthsRangeFill runs its CPU kernel (REGISTER_GPU_FALLBACK in structured_fill_op.cc).
#include "operators/fill/structured_fill_op.h"

namespace caffe2 {

REGISTER_CUDA_OPERATOR(RangeFill, RangeFillOp);
REGISTER_CUDA_OPERATOR(DiagonalFill, DiagonalFillOp);

}  // namespace caffe2
