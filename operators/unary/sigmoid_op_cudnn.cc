// The cuDNN engine of Sigmoid and SigmoidGradient (cudnn_activation_op.h); the contract, schema and
// gradient maker are the CPU op's (sigmoid_op.cc).
#include "operators/unary/cudnn_activation_op.h"

namespace caffe2 {

REGISTER_CUDA_OPERATOR(Sigmoid_ENGINE_CUDNN, CudnnActivationOp<CUDNN_ACTIVATION_SIGMOID>);
REGISTER_CUDA_OPERATOR(SigmoidGradient_ENGINE_CUDNN,
                       CudnnActivationGradientOp<CUDNN_ACTIVATION_SIGMOID>);

}  // namespace caffe2
