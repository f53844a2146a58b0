// CUDA kernel of WeightedSum (contract in weighted_sum_op.cc): Y = sum_i w_i * X_i with float X
// and 1-element float weights read on the device (a weight fed on the host is copied first).
// In place only as X0 -> Y.
// WeightedSumGradient: dX_i = w_i * dY on the device, and with grad_on_w dw_i = <dY, X_i> summed in
// double (as the CPU kernel does) by one block per weight (reduce_cuda.cuh). The CPU kernel reads
// X_i without checking its size; this one refuses an X_i with fewer values than dY.
#include <memory>
#include <vector>

#include "core/cuda/cuda_context.h"
#include "core/cuda/cuda_launch.h"
#include "core/operator.h"
#include "operators/common/cuda_inputs.h"
#include "operators/common/reduce_cuda.cuh"
#include "operators/sgd/weighted_sum_op.h"
#include "operators/tensor/tensor_util_cuda.h"

namespace caffe2 {
namespace {

// y = (accumulate ? y : 0) + w[0] * x
__global__ void AxpyKernel(int64_t n, const float* w, const float* x, bool accumulate, float* y) {
  const float weight = *w;
  C2_CUDA_KERNEL_LOOP(i, n) { y[i] = (accumulate ? y[i] : 0.f) + weight * x[i]; }
}

class CudaWeightedSumOp final : public Operator<CUDAContext> {
 public:
  using Operator<CUDAContext>::Operator;
  bool RunOnDevice() override {
    CheckWeightedSumInputs(*this);
    const Tensor& X0 = Input(0);
    const int64_t n = X0.numel();
    while (static_cast<int>(scratch_.size()) < InputSize()) {
      scratch_.push_back(std::make_unique<Tensor>());
    }
    std::vector<const float*> weights;
    for (int i = 1; i < InputSize(); i += 2) {
      CheckWeightedSumWeight(Input(i), i);
      weights.push_back(OnDevice(Input(i), device(), scratch_[i].get()).data<float>());
    }
    Tensor* Y = Output(0);
    if (!IsInputOutputAlias(0, 0)) Y->ResizeLike(X0);
    float* y = Y->mutable_data<float>();
    if (n == 0) return true;
    for (int i = 0; i < InputSize(); i += 2) {
      AxpyKernel<<<CudaBlocks(n), kCudaThreadsPerBlock, 0, context_.stream()>>>(
          n, weights[i / 2], Input(i).data<float>(), i > 0, y);
      C2_CUDA_KERNEL_LAUNCH_CHECK();
    }
    return true;
  }

 private:
  std::vector<std::unique_ptr<Tensor>> scratch_;  // one per input, for copies from elsewhere
};

// The terms dy[i] * x[i] of <dY, X>, in double.
struct DotTerm {
  const float* dy;
  const float* x;
  __device__ double operator()(int64_t i, int64_t) const {
    return static_cast<double>(dy[i]) * x[i];
  }
};

class CudaWeightedSumGradientOp final : public Operator<CUDAContext> {
 public:
  using Operator<CUDAContext>::Operator;
  bool RunOnDevice() override {
    const Tensor& dY = Input(0);
    const int pairs = (InputSize() - 1) / 2;
    const bool grad_on_w = GetSingleArgument<bool>("grad_on_w", false);
    CheckWeightedSumGradientOutputs(OutputSize(), pairs, grad_on_w);
    CheckOnDevice(dY, device(), "dY");
    const float* dy = dY.data<float>();
    const int64_t n = dY.numel();
    while (static_cast<int>(scratch_.size()) < InputSize()) {
      scratch_.push_back(std::make_unique<Tensor>());
    }
    for (int i = 0; i < pairs; ++i) {
      const Tensor& Xi = Input(1 + 2 * i);
      CheckWeightedSumWeight(Input(2 + 2 * i), 2 + 2 * i);
      const float* w =
          OnDevice(Input(2 + 2 * i), device(), scratch_[2 + 2 * i].get()).data<float>();
      Tensor* dX = Output(i);
      dX->ResizeLike(dY);
      float* dx = dX->mutable_data<float>();
      if (n > 0) {
        AxpyKernel<<<CudaBlocks(n), kCudaThreadsPerBlock, 0, context_.stream()>>>(n, w, dy, false,
                                                                                  dx);
        C2_CUDA_KERNEL_LAUNCH_CHECK();
      }
      if (grad_on_w) {
        CheckWeightedSumGradientX(Xi, i, n);
        CheckOnDevice(Xi, device(), "X");
        Tensor* dw = Output(pairs + i);
        dw->Resize(1);
        SumOver<double>(1, 1, n, DotTerm{dy, Xi.data<float>()}, 1.0, dw->mutable_data<float>(),
                        context_.stream());
      }
    }
    return true;
  }

 private:
  std::vector<std::unique_ptr<Tensor>> scratch_;  // one per input, for weights fed elsewhere
};

}  // namespace

REGISTER_CUDA_OPERATOR(WeightedSum, CudaWeightedSumOp);
REGISTER_CUDA_OPERATOR(WeightedSumGradient, CudaWeightedSumGradientOp);

}  // namespace caffe2
