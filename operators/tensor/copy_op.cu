// CUDA registrations of the copy family (classes in copy_op.h; data moves through the CUDA copy
// routines registered by core/cuda).
#include "operators/tensor/copy_op.h"

namespace caffe2 {

REGISTER_CUDA_OPERATOR(Copy, CopyOp);
REGISTER_CUDA_OPERATOR(CopyCPUToGPU, CopyToDeviceTypeOp<kCUDA>);
REGISTER_CUDA_OPERATOR(CopyGPUToCPU, CopyToDeviceTypeOp<kCPU>);
REGISTER_CUDA_OPERATOR(CopyOnDeviceLike, CopyOnDeviceLikeOp);
REGISTER_CUDA_OPERATOR(EnsureCPUOutput, EnsureCPUOutputOp);
REGISTER_CUDA_OPERATOR(Alias, AliasOp);

}  // namespace caffe2
