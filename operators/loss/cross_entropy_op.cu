// CUDA CrossEntropy and CrossEntropyGradient (float; the contract and checks are the CPU kernels',
// cross_entropy_op.cc / .h): one block per row sums Y_i in double, one thread per element for dX.
// Inputs living on the host or on another GPU (label, dY) are copied to the op's GPU.
#include <array>
#include <cmath>

#include "core/cuda/cuda_context.h"
#include "core/cuda/cuda_launch.h"
#include "core/operator.h"
#include "operators/common/block_reduce_cuda.cuh"
#include "operators/common/cuda_inputs.h"
#include "operators/loss/cross_entropy_op.h"

namespace caffe2 {
namespace {

constexpr float kLogThreshold = 1e-20f;  // as the CPU kernel

__global__ void CrossEntropyKernel(int64_t N, int64_t D, const float* x, const float* label,
                                   float* y) {
  for (int64_t i = blockIdx.x; i < N; i += gridDim.x) {
    double sum = 0;
    for (int64_t j = threadIdx.x; j < D; j += blockDim.x) {
      sum -= label[i * D + j] * logf(fmaxf(x[i * D + j], kLogThreshold));
    }
    sum = BlockSum(sum);
    if (threadIdx.x == 0) y[i] = static_cast<float>(sum);
  }
}

__global__ void CrossEntropyGradKernel(int64_t total, int64_t D, const float* x, const float* label,
                                       const float* dy, float* dx) {
  C2_CUDA_KERNEL_LOOP(k, total) { dx[k] = -dy[k / D] * label[k] / fmaxf(x[k], kLogThreshold); }
}

class CudaCrossEntropyOp final : public Operator<CUDAContext> {
 public:
  using Operator<CUDAContext>::Operator;

  bool RunOnDevice() override {
    const CrossEntropyShape r = CheckCrossEntropyInputs(Input(0), Input(1));
    const Tensor& X = OnDevice(Input(0), device(), &copies_[0]);
    const Tensor& L = OnDevice(Input(1), device(), &copies_[1]);
    Tensor* Y = Output(0);
    Y->Resize(r.N);
    float* y = Y->mutable_data<float>();
    if (r.N == 0) return true;
    CrossEntropyKernel<<<CudaRowBlocks(r.N), kCudaThreadsPerBlock, 0, context_.stream()>>>(
        r.N, r.D, X.data<float>(), L.data<float>(), y);
    C2_CUDA_KERNEL_LAUNCH_CHECK();
    return true;
  }

 private:
  std::array<Tensor, 2> copies_;
};

class CudaCrossEntropyGradientOp final : public Operator<CUDAContext> {
 public:
  using Operator<CUDAContext>::Operator;

  bool RunOnDevice() override {
    const CrossEntropyShape r = CheckCrossEntropyInputs(Input(0), Input(1));
    CheckCrossEntropyGradient(Input(2), r);
    const Tensor& X = OnDevice(Input(0), device(), &copies_[0]);
    const Tensor& L = OnDevice(Input(1), device(), &copies_[1]);
    const Tensor& dY = OnDevice(Input(2), device(), &copies_[2]);
    Tensor* dX = Output(0);
    dX->ResizeLike(X);
    float* dx = dX->mutable_data<float>();
    const int64_t total = X.numel();
    if (total == 0) return true;
    CrossEntropyGradKernel<<<CudaBlocks(total), kCudaThreadsPerBlock, 0, context_.stream()>>>(
        total, r.D, X.data<float>(), L.data<float>(), dY.data<float>(), dx);
    C2_CUDA_KERNEL_LAUNCH_CHECK();
    return true;
  }

 private:
  std::array<Tensor, 3> copies_;
};

}  // namespace

REGISTER_CUDA_OPERATOR(CrossEntropy, CudaCrossEntropyOp);
REGISTER_CUDA_OPERATOR(CrossEntropyGradient, CudaCrossEntropyGradientOp);

}  // namespace caffe2
