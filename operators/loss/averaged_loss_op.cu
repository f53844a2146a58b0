// CUDA AveragedLoss and AveragedLossGradient (float; the contract and checks are the CPU kernels',
// averaged_loss_op.cc / .h). The mean is one block's sum in double (these tensors are small: a loss
// per example), divided by numel as the CPU kernel does; loss and dLoss stay on the GPU.
// An input living on the host or on another GPU is copied to the op's GPU.
#include <array>

#include "core/cuda/cuda_context.h"
#include "core/cuda/cuda_launch.h"
#include "core/operator.h"
#include "operators/common/block_reduce_cuda.cuh"
#include "operators/common/cuda_inputs.h"
#include "operators/loss/averaged_loss_op.h"

namespace caffe2 {
namespace {

// One block.
__global__ void AveragedLossKernel(int64_t n, const float* x, float* loss) {
  double sum = 0;
  for (int64_t i = threadIdx.x; i < n; i += blockDim.x) sum += x[i];
  sum = BlockSum(sum);
  if (threadIdx.x == 0) *loss = static_cast<float>(sum / n);
}

__global__ void AveragedLossGradKernel(int64_t n, const float* dloss, float* dx) {
  const float g = dloss[0] / static_cast<float>(n);
  C2_CUDA_KERNEL_LOOP(i, n) { dx[i] = g; }
}

class CudaAveragedLossOp final : public Operator<CUDAContext> {
 public:
  using Operator<CUDAContext>::Operator;

  bool RunOnDevice() override {
    CheckAveragedLossInput(Input(0));
    const Tensor& X = OnDevice(Input(0), device(), &copy_);
    Tensor* L = Output(0);
    L->Resize(std::vector<int64_t>{});
    AveragedLossKernel<<<1, kCudaThreadsPerBlock, 0, context_.stream()>>>(
        X.numel(), X.data<float>(), L->mutable_data<float>());
    C2_CUDA_KERNEL_LAUNCH_CHECK();
    return true;
  }

 private:
  Tensor copy_;
};

class CudaAveragedLossGradientOp final : public Operator<CUDAContext> {
 public:
  using Operator<CUDAContext>::Operator;

  bool RunOnDevice() override {
    CheckAveragedLossGradient(Input(1));
    const Tensor& dLoss = OnDevice(Input(1), device(), &copy_);
    Tensor* dX = Output(0);
    dX->ResizeLike(Input(0));
    float* dx = dX->mutable_data<float>();
    const int64_t n = dX->numel();
    if (n == 0) return true;
    AveragedLossGradKernel<<<CudaBlocks(n), kCudaThreadsPerBlock, 0, context_.stream()>>>(
        n, dLoss.data<float>(), dx);
    C2_CUDA_KERNEL_LAUNCH_CHECK();
    return true;
  }

 private:
  Tensor copy_;
};

}  // namespace

REGISTER_CUDA_OPERATOR(AveragedLoss, CudaAveragedLossOp);
REGISTER_CUDA_OPERATOR(AveragedLossGradient, CudaAveragedLossGradientOp);

}  // namespace caffe2
