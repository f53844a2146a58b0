// CUDA Dropout and DropoutGrad (the math and arguments are dropout_op.cc's), registered for CUDA as
// Dropout and DropoutGrad. Training draws one uniform in (0, 1] per element from the context's
// cuRAND generator (seeded by DeviceOption.random_seed) and keeps the element when it exceeds
// ratio, so P(keep) = 1 - ratio; Y = X * keep / (1 - ratio) and the bool mask (on the GPU) = keep.
// The draws differ from the CPU op's, so only the distribution and the mask/Y relation match the
// CPU op. Test mode copies X (nothing when Y is X). Y may be X and dX may be dY.
#include <curand.h>

#include "core/cuda/cuda_context.h"
#include "core/cuda/cuda_launch.h"
#include "core/operator.h"
#include "operators/nn/dropout_op.h"

namespace caffe2 {
namespace {

__global__ void DropoutKernel(int64_t n, float ratio, float scale, const float* x,
                              const float* uniform, float* y, bool* mask) {
  C2_CUDA_KERNEL_LOOP(i, n) {
    const bool keep = uniform[i] > ratio;
    mask[i] = keep;
    y[i] = keep ? x[i] * scale : 0.f;
  }
}

__global__ void DropoutGradKernel(int64_t n, float scale, const float* dy, const bool* mask,
                                  float* dx) {
  C2_CUDA_KERNEL_LOOP(i, n) { dx[i] = mask[i] ? dy[i] * scale : 0.f; }
}

class CudaDropoutBase : public Operator<CUDAContext> {
 public:
  CudaDropoutBase(const OperatorDef& def, Workspace* ws)
      : Operator<CUDAContext>(def, ws), args_(ReadDropoutArgs(*this)) {}

 protected:
  // Y = X on the op's stream (nothing when they are one tensor).
  void Identity(const Tensor& X, Tensor* Y, bool in_place) {
    if (in_place) return;
    Y->ResizeLike(X);
    void* y = Y->raw_mutable_data(X.meta());
    if (X.nbytes() > 0) {
      C2_CUDA_CHECK(cudaMemcpyAsync(y, X.raw_data(), X.nbytes(), cudaMemcpyDeviceToDevice,
                                    context_.stream()));
    }
  }

  const DropoutArgs args_;
};

class CudaDropoutOp final : public CudaDropoutBase {
 public:
  CudaDropoutOp(const OperatorDef& def, Workspace* ws)
      : CudaDropoutBase(def, ws), uniform_(context_.device()) {
    CheckDropoutOutputs(*this, args_);
  }

  bool RunOnDevice() override {
    const Tensor& X = Input(0);
    CheckDropoutInput(X);
    Tensor* Y = Output(0);
    if (args_.is_test) {
      Identity(X, Y, IsInputOutputAlias(0, 0));
      return true;
    }
    Y->ResizeLike(X);
    float* y = Y->mutable_data<float>();
    Tensor* M = Output(1);
    M->ResizeLike(X);
    bool* mask = M->mutable_data<bool>();
    const int64_t n = X.numel();
    if (n == 0) return true;
    uniform_.Resize(n);
    float* u = uniform_.mutable_data<float>();
    C2_CURAND_CHECK(curandGenerateUniform(context_.curand_generator(), u, static_cast<size_t>(n)));
    DropoutKernel<<<CudaBlocks(n), kCudaThreadsPerBlock, 0, context_.stream()>>>(
        n, args_.ratio, 1.0f / (1.0f - args_.ratio), X.data<float>(), u, y, mask);
    C2_CUDA_KERNEL_LAUNCH_CHECK();
    return true;
  }

 private:
  Tensor uniform_;
};

class CudaDropoutGradOp final : public CudaDropoutBase {
 public:
  CudaDropoutGradOp(const OperatorDef& def, Workspace* ws) : CudaDropoutBase(def, ws) {
    CheckDropoutGradInputCount(*this, args_);
  }

  bool RunOnDevice() override {
    const Tensor& dY = Input(0);
    Tensor* dX = Output(0);
    if (args_.is_test) {
      Identity(dY, dX, IsInputOutputAlias(0, 0));
      return true;
    }
    const Tensor& M = Input(1);
    CheckDropoutGradInputs(dY, M);
    dX->ResizeLike(dY);
    float* dx = dX->mutable_data<float>();
    const int64_t n = dY.numel();
    if (n == 0) return true;
    DropoutGradKernel<<<CudaBlocks(n), kCudaThreadsPerBlock, 0, context_.stream()>>>(
        n, 1.0f / (1.0f - args_.ratio), dY.data<float>(), M.data<bool>(), dx);
    C2_CUDA_KERNEL_LAUNCH_CHECK();
    return true;
  }
};

}  // namespace

REGISTER_CUDA_OPERATOR(Dropout, CudaDropoutOp);
REGISTER_CUDA_OPERATOR(DropoutGrad, CudaDropoutGradOp);

}  // namespace caffe2
