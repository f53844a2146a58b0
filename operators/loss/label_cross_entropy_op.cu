// CUDA LabelCrossEntropy and LabelCrossEntropyGradient (float; the contract and checks are the CPU
// kernels', label_cross_entropy_op.cc / .h): one thread per row for Y, one per element for dX.
//
// Label values: labels fed on the host are checked there and raise exactly as on the CPU. On the
// GPU a label outside [0, D) cannot raise, so it poisons: Y is NaN in that row, and so is the row
// of dX.
//
// Inputs living on the host or on another GPU (labels, dY) are copied to the op's GPU.
#include <array>
#include <cmath>

#include "core/cuda/cuda_context.h"
#include "core/cuda/cuda_launch.h"
#include "core/operator.h"
#include "operators/common/cuda_inputs.h"
#include "operators/loss/label_cross_entropy_op.h"

namespace caffe2 {
namespace {

constexpr float kLogThreshold = 1e-20f;  // as the CPU kernel

__global__ void LabelCrossEntropyKernel(int64_t N, int64_t D, const float* x, const int* label,
                                        float* y) {
  C2_CUDA_KERNEL_LOOP(i, N) {
    const int l = label[i];
    y[i] = l >= 0 && l < D ? -logf(fmaxf(x[i * D + l], kLogThreshold)) : NAN;
  }
}

__global__ void LabelCrossEntropyGradKernel(int64_t total, int64_t D, const float* x,
                                            const int* label, const float* dy, float* dx) {
  C2_CUDA_KERNEL_LOOP(k, total) {
    const int64_t i = k / D;
    const int l = label[i];
    if (l < 0 || l >= D) {
      dx[k] = NAN;
    } else {
      dx[k] = k - i * D == l ? -dy[i] / fmaxf(x[k], kLogThreshold) : 0.0f;
    }
  }
}

class CudaLabelCrossEntropyOp final : public Operator<CUDAContext> {
 public:
  using Operator<CUDAContext>::Operator;

  bool RunOnDevice() override {
    const LabelCrossEntropyShape r = CheckLabelCrossEntropyInputs(Input(0), Input(1));
    const Tensor& X = OnDevice(Input(0), device(), &copies_[0]);
    const Tensor& L = OnDevice(Input(1), device(), &copies_[1]);
    Tensor* Y = Output(0);
    Y->Resize(r.N);
    float* y = Y->mutable_data<float>();
    if (r.N == 0) return true;
    LabelCrossEntropyKernel<<<CudaBlocks(r.N), kCudaThreadsPerBlock, 0, context_.stream()>>>(
        r.N, r.D, X.data<float>(), L.data<int>(), y);
    C2_CUDA_KERNEL_LAUNCH_CHECK();
    return true;
  }

 private:
  std::array<Tensor, 2> copies_;
};

class CudaLabelCrossEntropyGradientOp final : public Operator<CUDAContext> {
 public:
  using Operator<CUDAContext>::Operator;

  bool RunOnDevice() override {
    const LabelCrossEntropyShape r = CheckLabelCrossEntropyInputs(Input(0), Input(1));
    CheckLabelCrossEntropyGradient(Input(2), r);
    const Tensor& X = OnDevice(Input(0), device(), &copies_[0]);
    const Tensor& L = OnDevice(Input(1), device(), &copies_[1]);
    const Tensor& dY = OnDevice(Input(2), device(), &copies_[2]);
    Tensor* dX = Output(0);
    dX->ResizeLike(X);
    float* dx = dX->mutable_data<float>();
    const int64_t total = X.numel();
    if (total == 0) return true;
    LabelCrossEntropyGradKernel<<<CudaBlocks(total), kCudaThreadsPerBlock, 0, context_.stream()>>>(
        total, r.D, X.data<float>(), L.data<int>(), dY.data<float>(), dx);
    C2_CUDA_KERNEL_LAUNCH_CHECK();
    return true;
  }

 private:
  std::array<Tensor, 3> copies_;
};

}  // namespace

REGISTER_CUDA_OPERATOR(LabelCrossEntropy, CudaLabelCrossEntropyOp);
REGISTER_CUDA_OPERATOR(LabelCrossEntropyGradient, CudaLabelCrossEntropyGradientOp);

}  // namespace caffe2
