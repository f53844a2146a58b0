// The cuDNN engine of Relu and ReluGradient (cudnn_activation_op.h); the contract, schema and
// gradient maker are the CPU op's (relu_op.cc).
#include "operators/unary/cudnn_activation_op.h"

namespace caffe2 {

REGISTER_CUDA_OPERATOR(Relu_ENGINE_CUDNN, CudnnActivationOp<CUDNN_ACTIVATION_RELU>);
REGISTER_CUDA_OPERATOR(ReluGradient_ENGINE_CUDNN, CudnnActivationGradientOp<CUDNN_ACTIVATION_RELU>);

}  // namespace caffe2
