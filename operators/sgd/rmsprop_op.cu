// CUDA kernel of RmsProp, with the contract and input checks of the CPU op (rmsprop_op.cc). lr is
// read on the device (a host lr is copied first). Every element is read before it is written, so
// outputs may be their inputs.
#include <cmath>

#include "core/cuda/cuda_launch.h"
#include "operators/sgd/sgd_util_cuda.h"

namespace caffe2 {
namespace {

__global__ void RmsPropKernel(int64_t n, const float* g, const float* ms, const float* mom,
                              const float* lr, float decay, float momentum, float epsilon,
                              float* gout, float* msout, float* momout) {
  const float rate = *lr;
  C2_CUDA_KERNEL_LOOP(i, n) {
    const float gi = g[i];
    const float s = ms[i] + (1 - decay) * (gi * gi - ms[i]);
    const float m = momentum * mom[i] + rate * gi / sqrtf(epsilon + s);
    msout[i] = s;
    momout[i] = m;
    gout[i] = m;
  }
}

class CudaRmsPropOp final : public Operator<CUDAContext> {
 public:
  CudaRmsPropOp(const OperatorDef& def, Workspace* ws)
      : Operator<CUDAContext>(def, ws),
        decay_(GetSingleArgument<float>("decay", 0.9f)),
        momentum_(GetSingleArgument<float>("momentum", 0.f)),
        epsilon_(GetSingleArgument<float>("epsilon", 1e-5f)) {}
  bool RunOnDevice() override {
    const Tensor& grad = Input(0);
    CheckFloat(grad, "grad");
    CheckStateLikeGrad(Input(1), "mean_squares", grad);
    CheckStateLikeGrad(Input(2), "mom", grad);
    const float* lr = DeviceLearningRate(Input(3), device(), &lr_on_device_);
    float* out[3];
    for (int i = 0; i < 3; ++i) {
      Output(i)->ResizeLike(grad);
      out[i] = Output(i)->mutable_data<float>();
    }
    const int64_t n = grad.numel();
    if (n == 0) return true;
    RmsPropKernel<<<CudaBlocks(n), kCudaThreadsPerBlock, 0, context_.stream()>>>(
        n, grad.data<float>(), Input(1).data<float>(), Input(2).data<float>(), lr, decay_,
        momentum_, epsilon_, out[0], out[1], out[2]);
    C2_CUDA_KERNEL_LAUNCH_CHECK();
    return true;
  }

 private:
  float decay_, momentum_, epsilon_;
  Tensor lr_on_device_;
};
}  // namespace

REGISTER_CUDA_OPERATOR(RmsProp, CudaRmsPropOp);

}  // namespace caffe2
