// CUDA kernels of FP16MomentumSGDUpdate and FP32MomentumSGDUpdate (float16 / float with
// weight_decay and the optional skip flag of dynamic loss scaling; contracts in
// fp16_momentum_sgd_op.cc): the momentum update of momentum_sgd_cuda.cuh, computed in float.
#include "operators/sgd/momentum_sgd_cuda.cuh"

namespace caffe2 {

REGISTER_CUDA_OPERATOR(FP32MomentumSGDUpdate, CudaMomentumSGDOp<float, true>);
REGISTER_CUDA_OPERATOR(FP16MomentumSGDUpdate, CudaMomentumSGDOp<float16, true>);

}  // namespace caffe2
