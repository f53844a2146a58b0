// CUDA kernels of the dense adaptive updates, with the CPU ops' contracts: Adam (adam_op.cc),
// Adagrad (adagrad_op.cc) and RmsProp (rmsprop_op.cc). lr is read on the device (a host lr is
// copied first); Adam's iteration counter is a host int64 tensor (copied to the host if it lives
// on a GPU) from which the bias correction is computed. Every element is read before it is
// written, so outputs may be their inputs.
#include <cmath>

#include "core/cuda/cuda_context.h"
#include "core/cuda/cuda_launch.h"
#include "core/operator.h"
#include "operators/common/cuda_inputs.h"
#include "operators/sgd/sgd_util.h"

namespace caffe2 {
namespace {

const float* DeviceLearningRate(const Tensor& lr_input, Device device, Tensor* scratch) {
  const Tensor& lr = OnDevice(lr_input, device, scratch);
  C2_ENFORCE(lr.numel() == 1 && lr.IsType<float>(),
             "lr must be a one-element float tensor, got ", lr.DebugString());
  return lr.data<float>();
}

void Check(const Tensor& t, const char* name, const Tensor& grad) {
  CheckFloat(t, name);
  CheckSameShape(t, name, grad, "grad");
}

__global__ void AdamKernel(int64_t n, const float* p, const float* m1, const float* m2,
                           const float* g, const float* lr, float corr, float beta1, float beta2,
                           float epsilon, float* np, float* nm1, float* nm2) {
  const float step = *lr * corr;
  C2_CUDA_KERNEL_LOOP(i, n) {
    const float gi = g[i];
    const float a = beta1 * m1[i] + (1 - beta1) * gi;
    const float b = beta2 * m2[i] + (1 - beta2) * gi * gi;
    np[i] = p[i] + step * a / (sqrtf(b) + epsilon);
    nm1[i] = a;
    nm2[i] = b;
  }
}

class CudaAdamOp final : public Operator<CUDAContext> {
 public:
  CudaAdamOp(const OperatorDef& def, Workspace* ws)
      : Operator<CUDAContext>(def, ws),
        beta1_(GetSingleArgument<float>("beta1", 0.9f)),
        beta2_(GetSingleArgument<float>("beta2", 0.999f)),
        epsilon_(GetSingleArgument<float>("epsilon", 1e-5f)) {}
  bool RunOnDevice() override {
    const Tensor& grad = Input(3);
    CheckFloat(grad, "grad");
    Check(Input(0), "param", grad);
    Check(Input(1), "m1", grad);
    Check(Input(2), "m2", grad);
    Tensor iter_on_host(Device{kCPU, 0});
    const Tensor& it = OnDevice(Input(5), Device{kCPU, 0}, &iter_on_host);
    C2_ENFORCE(it.numel() == 1 && it.IsType<int64_t>(),
               "iter must be a one-element int64 tensor, got ", it.DebugString());
    const double t = static_cast<double>(it.data<int64_t>()[0] + 1);
    const float corr =
        static_cast<float>(std::sqrt(1.0 - std::pow(beta2_, t)) / (1.0 - std::pow(beta1_, t)));
    const float* lr = DeviceLearningRate(Input(4), device(), &lr_on_device_);
    float* out[3];
    for (int i = 0; i < 3; ++i) {
      Output(i)->ResizeLike(grad);
      out[i] = Output(i)->mutable_data<float>();
    }
    const int64_t n = grad.numel();
    if (n == 0) return true;
    AdamKernel<<<CudaBlocks(n), kCudaThreadsPerBlock, 0, context_.stream()>>>(
        n, Input(0).data<float>(), Input(1).data<float>(), Input(2).data<float>(),
        grad.data<float>(), lr, corr, beta1_, beta2_, epsilon_, out[0], out[1], out[2]);
    C2_CUDA_KERNEL_LAUNCH_CHECK();
    return true;
  }

 private:
  float beta1_, beta2_, epsilon_;
  Tensor lr_on_device_;
};

__global__ void AdagradKernel(int64_t n, const float* p, const float* h, const float* g,
                              const float* lr, float epsilon, float decay, float* np, float* nh) {
  const float rate = *lr;
  C2_CUDA_KERNEL_LOOP(i, n) {
    const float gi = g[i];
    const float hi = decay * h[i] + gi * gi;
    np[i] = p[i] + rate * gi / (sqrtf(hi) + epsilon);
    nh[i] = hi;
  }
}

class CudaAdagradOp final : public Operator<CUDAContext> {
 public:
  CudaAdagradOp(const OperatorDef& def, Workspace* ws)
      : Operator<CUDAContext>(def, ws),
        epsilon_(GetSingleArgument<float>("epsilon", 1e-5f)),
        decay_(GetSingleArgument<float>("decay", 1.0f)) {}
  bool RunOnDevice() override {
    const Tensor& grad = Input(2);
    CheckFloat(grad, "grad");
    Check(Input(0), "param", grad);
    Check(Input(1), "moment", grad);
    const float* lr = DeviceLearningRate(Input(3), device(), &lr_on_device_);
    float* out[2];
    for (int i = 0; i < 2; ++i) {
      Output(i)->ResizeLike(grad);
      out[i] = Output(i)->mutable_data<float>();
    }
    const int64_t n = grad.numel();
    if (n == 0) return true;
    AdagradKernel<<<CudaBlocks(n), kCudaThreadsPerBlock, 0, context_.stream()>>>(
        n, Input(0).data<float>(), Input(1).data<float>(), grad.data<float>(), lr, epsilon_,
        decay_, out[0], out[1]);
    C2_CUDA_KERNEL_LAUNCH_CHECK();
    return true;
  }

 private:
  float epsilon_, decay_;
  Tensor lr_on_device_;
};

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
    Check(Input(1), "mean_squares", grad);
    Check(Input(2), "mom", grad);
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

REGISTER_CUDA_OPERATOR(Adam, CudaAdamOp);
REGISTER_CUDA_OPERATOR(Adagrad, CudaAdagradOp);
REGISTER_CUDA_OPERATOR(RmsProp, CudaRmsPropOp);

}  // namespace caffe2
