// The cuDNN engine of Tanh and TanhGradient (cudnn_activation_op.h); the contract, schema and
// gradient maker are the CPU op's (tanh_op.cc).
#include "operators/unary/cudnn_activation_op.h"

namespace caffe2 {

REGISTER_CUDA_OPERATOR(Tanh_ENGINE_CUDNN, CudnnActivationOp<CUDNN_ACTIVATION_TANH>);
REGISTER_CUDA_OPERATOR(TanhGradient_ENGINE_CUDNN, CudnnActivationGradientOp<CUDNN_ACTIVATION_TANH>);

}  // namespace caffe2
