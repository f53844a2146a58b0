// CUDA kernels of LayerNorm and LayerNormGradient (contracts in layer_norm_op.cc), float only like
// the CPU ops. One block per row of the (M, D) view: the row sums are accumulated in double and
// the per-element formulas are the CPU kernel's, in float.
#include "core/cuda/cuda_context.h"
#include "core/operator.h"
#include "operators/common/block_reduce_cuda.cuh"
#include "operators/norm/norm_op_checks.h"

namespace caffe2 {
namespace {

// mean = sum / D, stdev = sqrt(max(0, sumsq / D - mean^2) + epsilon) in double, then
// Y = (X - mean) / stdev in float.
__global__ void LayerNormKernel(int64_t M, int64_t D, double epsilon, const float* x, float* mean,
                                float* stdev, float* y) {
  for (int64_t r = blockIdx.x; r < M; r += gridDim.x) {
    const float* xr = x + r * D;
    double sum = 0, sumsq = 0;
    for (int64_t j = threadIdx.x; j < D; j += blockDim.x) {
      const double v = xr[j];
      sum += v;
      sumsq += v * v;
    }
    sum = BlockSum(sum);
    sumsq = BlockSum(sumsq);
    const double m = sum / D;
    const double var = fmax(0.0, sumsq / D - m * m);
    const float mf = static_cast<float>(m);
    const float sf = static_cast<float>(sqrt(var + epsilon));
    if (threadIdx.x == 0) {
      mean[r] = mf;
      stdev[r] = sf;
    }
    float* yr = y + r * D;  // the block has read its whole row (BlockSum synchronises)
    for (int64_t j = threadIdx.x; j < D; j += blockDim.x) yr[j] = __fdiv_rn(xr[j] - mf, sf);
  }
}

// xhat = (x - mean) / stdev; dX = (dY - mean(dY) - xhat * mean(dY * xhat)) / stdev.
__global__ void LayerNormGradientKernel(int64_t M, int64_t D, const float* dy, const float* mean,
                                        const float* stdev, const float* x, float* dx) {
  for (int64_t r = blockIdx.x; r < M; r += gridDim.x) {
    const float mu = mean[r], sd = stdev[r];
    const float* xr = x + r * D;
    const float* gr = dy + r * D;
    double sdy = 0, sdyx = 0;
    for (int64_t j = threadIdx.x; j < D; j += blockDim.x) {
      const float xhat = __fdiv_rn(xr[j] - mu, sd);
      sdy += gr[j];
      sdyx += __fmul_rn(gr[j], xhat);
    }
    sdy = BlockSum(sdy);
    sdyx = BlockSum(sdyx);
    const float mean_dy = static_cast<float>(sdy / D);
    const float mean_dyx = static_cast<float>(sdyx / D);
    float* dxr = dx + r * D;
    for (int64_t j = threadIdx.x; j < D; j += blockDim.x) {
      const float xhat = __fdiv_rn(xr[j] - mu, sd);
      dxr[j] = __fdiv_rn(gr[j] - mean_dy - __fmul_rn(xhat, mean_dyx), sd);
    }
  }
}

class CudaLayerNormOp final : public Operator<CUDAContext> {
 public:
  CudaLayerNormOp(const OperatorDef& def, Workspace* ws)
      : Operator<CUDAContext>(def, ws),
        axis_(GetSingleArgument<int>("axis", 1)),
        epsilon_(GetSingleArgument<float>("epsilon", 1e-5f)) {
    CheckNormEpsilon(epsilon_);
  }

  bool RunOnDevice() override {
    const Tensor& X = Input(0);
    const LayerNormView v = CheckLayerNormInput(axis_, X);
    const float* x = X.data<float>();
    Tensor* Y = Output(0);
    Tensor* mean = Output(1);
    Tensor* stdev = Output(2);
    Y->ResizeLike(X);
    mean->Resize(v.moments_dims);
    stdev->Resize(v.moments_dims);
    float* y = Y->mutable_data<float>();
    float* mu = mean->mutable_data<float>();
    float* sd = stdev->mutable_data<float>();
    if (v.M == 0) return true;
    LayerNormKernel<<<CudaRowBlocks(v.M), kCudaThreadsPerBlock, 0, context_.stream()>>>(
        v.M, v.D, static_cast<double>(epsilon_), x, mu, sd, y);
    C2_CUDA_KERNEL_LAUNCH_CHECK();
    return true;
  }

 private:
  int axis_;
  float epsilon_;
};

class CudaLayerNormGradientOp final : public Operator<CUDAContext> {
 public:
  CudaLayerNormGradientOp(const OperatorDef& def, Workspace* ws)
      : Operator<CUDAContext>(def, ws), axis_(GetSingleArgument<int>("axis", 1)) {}

  bool RunOnDevice() override {
    const Tensor& dY = Input(0);
    const Tensor& mean = Input(2);
    const Tensor& stdev = Input(3);
    const Tensor& X = Input(4);
    const LayerNormView v = CheckLayerNormGradientInputs(axis_, dY, mean, stdev, X);
    const float* x = X.data<float>();
    const float* dy = dY.data<float>();
    const float* mu = mean.data<float>();
    const float* sd = stdev.data<float>();
    Tensor* dX = Output(0);
    dX->ResizeLike(X);
    float* dx = dX->mutable_data<float>();
    if (v.M == 0 || v.D == 0) return true;
    LayerNormGradientKernel<<<CudaRowBlocks(v.M), kCudaThreadsPerBlock, 0, context_.stream()>>>(
        v.M, v.D, dy, mu, sd, x, dx);
    C2_CUDA_KERNEL_LAUNCH_CHECK();
    return true;
  }

 private:
  int axis_;
};

}  // namespace

REGISTER_CUDA_OPERATOR(LayerNorm, CudaLayerNormOp);
REGISTER_CUDA_OPERATOR(LayerNormGradient, CudaLayerNormGradientOp);

}  // namespace caffe2
