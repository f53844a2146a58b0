// CUDA kernels of PRelu and PReluGradient (contract in prelu_op.cc; layout in prelu_op.h). The
// slope gradient sums over the (pre, C, inner) view of X, in double like the CPU kernel.
#include <string>

#include "core/cuda/cuda_context.h"
#include "core/operator.h"
#include "operators/common/reduce_cuda.cuh"
#include "operators/nn/prelu_op.h"

namespace caffe2 {
namespace {

__global__ void PReluKernel(int64_t n, int64_t C, int64_t inner, const float* x, const float* w,
                            float* y) {
  C2_CUDA_KERNEL_LOOP(i, n) {
    const float v = x[i];
    y[i] = v > 0 ? v : w[(i / inner) % C] * v;
  }
}

__global__ void PReluGradientKernel(int64_t n, int64_t C, int64_t inner, const float* x,
                                    const float* w, const float* dy, float* dx) {
  C2_CUDA_KERNEL_LOOP(i, n) { dx[i] = x[i] > 0 ? dy[i] : w[(i / inner) % C] * dy[i]; }
}

struct SlopeGradientTerm {  // dY * X where X <= 0
  const float* x;
  const float* dy;
  __device__ double operator()(int64_t i, int64_t) const {
    return x[i] > 0 ? 0.0 : static_cast<double>(dy[i]) * x[i];
  }
};

class CudaPReluOp final : public Operator<CUDAContext> {
 public:
  CudaPReluOp(const OperatorDef& def, Workspace* ws)
      : Operator<CUDAContext>(def, ws),
        nchw_(GetSingleArgument<std::string>("order", "NCHW") == "NCHW") {
    CheckPReluOrder(GetSingleArgument<std::string>("order", "NCHW"));
  }
  bool RunOnDevice() override {
    const Tensor& X = Input(0);
    const Tensor& slope = Input(1);
    const PReluLayout l = CheckPReluInputs(X, slope, nchw_);
    Tensor* Y = Output(0);
    Y->ResizeLike(X);
    float* y = Y->mutable_data<float>();
    const int64_t n = X.numel();
    if (n == 0) return true;
    PReluKernel<<<CudaBlocks(n), kCudaThreadsPerBlock, 0, context_.stream()>>>(
        n, l.C, l.inner, X.data<float>(), slope.data<float>(), y);
    C2_CUDA_KERNEL_LAUNCH_CHECK();
    return true;
  }

 private:
  bool nchw_;
};

class CudaPReluGradientOp final : public Operator<CUDAContext> {
 public:
  CudaPReluGradientOp(const OperatorDef& def, Workspace* ws)
      : Operator<CUDAContext>(def, ws),
        nchw_(GetSingleArgument<std::string>("order", "NCHW") == "NCHW") {
    CheckPReluOrder(GetSingleArgument<std::string>("order", "NCHW"));
  }
  bool RunOnDevice() override {
    const Tensor& dY = Input(1);
    const Tensor& X = Input(2);
    const Tensor& slope = Input(3);
    const PReluLayout l = CheckPReluInputs(X, slope, nchw_);
    CheckPReluGradient(dY, X);
    Tensor* dX = Output(0);
    Tensor* dS = Output(1);
    dX->ResizeLike(X);
    dS->ResizeLike(slope);
    float* dx = dX->mutable_data<float>();
    float* ds = dS->mutable_data<float>();
    const int64_t n = X.numel();
    if (n == 0) {
      C2_CUDA_CHECK(cudaMemsetAsync(ds, 0, slope.nbytes(), context_.stream()));
      return true;
    }
    // The slope gradient first: dX may be dY.
    SumOver<double>(n / (l.C * l.inner), l.C, l.inner,
                    SlopeGradientTerm{X.data<float>(), dY.data<float>()}, 1.0, ds,
                    context_.stream());
    PReluGradientKernel<<<CudaBlocks(n), kCudaThreadsPerBlock, 0, context_.stream()>>>(
        n, l.C, l.inner, X.data<float>(), slope.data<float>(), dY.data<float>(), dx);
    C2_CUDA_KERNEL_LAUNCH_CHECK();
    return true;
  }

 private:
  bool nchw_;
};

}  // namespace

REGISTER_CUDA_OPERATOR(PRelu, CudaPReluOp);
REGISTER_CUDA_OPERATOR(PReluGradient, CudaPReluGradientOp);

}  // namespace caffe2
