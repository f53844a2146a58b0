// CUDA kernel of WeightedSum (contract in weighted_sum_op.cc): Y = sum_i w_i * X_i with float X
// and 1-element float weights read on the device (a weight fed on the host is copied first).
// In place only as X0 -> Y. WeightedSumGradient runs its CPU kernel (cuda_fallback_ops.cc).
#include <memory>
#include <vector>

#include "core/cuda/cuda_context.h"
#include "core/cuda/cuda_launch.h"
#include "core/operator.h"
#include "operators/common/cuda_inputs.h"

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
    C2_ENFORCE(InputSize() > 0 && InputSize() % 2 == 0,
               "inputs must come in (X, weight) pairs, got ", InputSize());
    for (int i = 2; i < InputSize(); i += 2) {
      C2_ENFORCE(!IsInputOutputAlias(i, 0), "only X0 may be the output (input ", i, " is)");
    }
    const Tensor& X0 = Input(0);
    C2_ENFORCE(X0.IsType<float>(), "float X expected, got ", X0.meta().name);
    const int64_t n = X0.numel();
    while (static_cast<int>(scratch_.size()) < InputSize()) {
      scratch_.push_back(std::make_unique<Tensor>());
    }
    std::vector<const float*> weights;
    for (int i = 1; i < InputSize(); i += 2) {
      const Tensor& w = OnDevice(Input(i), device(), scratch_[i].get());
      C2_ENFORCE(w.numel() == 1 && w.IsType<float>(), "weight ", i,
                 " must be a 1-element float tensor, got ", w.DebugString());
      weights.push_back(w.data<float>());
    }
    for (int i = 2; i < InputSize(); i += 2) {
      C2_ENFORCE(Input(i).dims() == X0.dims(), "X", i / 2, " ",
                 Tensor::DimsString(Input(i).dims()), " does not match X0 ",
                 Tensor::DimsString(X0.dims()));
      C2_ENFORCE(Input(i).IsType<float>(), "X", i / 2, " must be float, got ",
                 Input(i).meta().name);
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

}  // namespace

REGISTER_CUDA_OPERATOR(WeightedSum, CudaWeightedSumOp);

}  // namespace caffe2
