// CUDA registration of StopGradient (contract in stop_gradient_op.cc): the identity. In place it
// does nothing; otherwise Y is a device-to-device copy of X queued on the op's stream. (CopyOp,
// which the CPU registers, would serve too, but Tensor::CopyFrom waits for the GPU on every run.)
#include "operators/tensor/tensor_util_cuda.h"

namespace caffe2 {
namespace {

class CudaStopGradientOp final : public Operator<CUDAContext> {
 public:
  using Operator<CUDAContext>::Operator;
  bool RunOnDevice() override {
    if (!IsInputOutputAlias(0, 0)) CopyTensorData(&context_, Input(0), Output(0));
    return true;
  }
};

}  // namespace

REGISTER_CUDA_OPERATOR(StopGradient, CudaStopGradientOp);

}  // namespace caffe2
