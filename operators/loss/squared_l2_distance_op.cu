// CUDA SquaredL2Distance and SquaredL2DistanceGradient (float; the contract and checks are the CPU
// kernels', squared_l2_distance_op.cc / .h): one block per row sums the squared float differences
// in double, one thread per element for dX and dY.
// Inputs living on the host or on another GPU are copied to the op's GPU.
#include <array>

#include "core/cuda/cuda_context.h"
#include "core/cuda/cuda_launch.h"
#include "core/operator.h"
#include "operators/common/block_reduce_cuda.cuh"
#include "operators/common/cuda_inputs.h"
#include "operators/loss/squared_l2_distance_op.h"

namespace caffe2 {
namespace {

__global__ void SquaredL2DistanceKernel(int64_t n, int64_t d, const float* x, const float* y,
                                        float* z) {
  for (int64_t i = blockIdx.x; i < n; i += gridDim.x) {
    double acc = 0;
    for (int64_t j = threadIdx.x; j < d; j += blockDim.x) {
      const double diff = x[i * d + j] - y[i * d + j];
      acc += diff * diff;
    }
    acc = BlockSum(acc);
    if (threadIdx.x == 0) z[i] = static_cast<float>(0.5 * acc);
  }
}

__global__ void SquaredL2DistanceGradKernel(int64_t total, int64_t d, const float* x,
                                            const float* y, const float* dz, float* dx, float* dy) {
  C2_CUDA_KERNEL_LOOP(k, total) {
    const float g = (x[k] - y[k]) * dz[k / d];
    dx[k] = g;
    dy[k] = -g;
  }
}

class CudaSquaredL2DistanceOp final : public Operator<CUDAContext> {
 public:
  using Operator<CUDAContext>::Operator;

  bool RunOnDevice() override {
    const SquaredL2DistanceShape s = CheckSquaredL2DistanceInputs(Input(0), Input(1));
    const Tensor& X = OnDevice(Input(0), device(), &copies_[0]);
    const Tensor& Y = OnDevice(Input(1), device(), &copies_[1]);
    Tensor* Z = Output(0);
    Z->Resize(s.n);
    float* z = Z->mutable_data<float>();
    if (s.n == 0) return true;
    SquaredL2DistanceKernel<<<CudaRowBlocks(s.n), kCudaThreadsPerBlock, 0, context_.stream()>>>(
        s.n, s.d, X.data<float>(), Y.data<float>(), z);
    C2_CUDA_KERNEL_LAUNCH_CHECK();
    return true;
  }

 private:
  std::array<Tensor, 2> copies_;
};

class CudaSquaredL2DistanceGradientOp final : public Operator<CUDAContext> {
 public:
  using Operator<CUDAContext>::Operator;

  bool RunOnDevice() override {
    const SquaredL2DistanceShape s = CheckSquaredL2DistanceInputs(Input(0), Input(1));
    CheckSquaredL2DistanceGradient(Input(2), s);
    const Tensor& X = OnDevice(Input(0), device(), &copies_[0]);
    const Tensor& Y = OnDevice(Input(1), device(), &copies_[1]);
    const Tensor& dZ = OnDevice(Input(2), device(), &copies_[2]);
    Tensor* dX = Output(0);
    Tensor* dY = Output(1);
    dX->ResizeLike(X);
    dY->ResizeLike(Y);
    float* dx = dX->mutable_data<float>();
    float* dy = dY->mutable_data<float>();
    const float* dz = dZ.data<float>();
    const int64_t total = X.numel();
    if (total == 0) return true;
    SquaredL2DistanceGradKernel<<<CudaBlocks(total), kCudaThreadsPerBlock, 0, context_.stream()>>>(
        total, s.d, X.data<float>(), Y.data<float>(), dz, dx, dy);
    C2_CUDA_KERNEL_LAUNCH_CHECK();
    return true;
  }

 private:
  std::array<Tensor, 3> copies_;
};

}  // namespace

REGISTER_CUDA_OPERATOR(SquaredL2Distance, CudaSquaredL2DistanceOp);
REGISTER_CUDA_OPERATOR(SquaredL2DistanceGradient, CudaSquaredL2DistanceGradientOp);

}  // namespace caffe2
