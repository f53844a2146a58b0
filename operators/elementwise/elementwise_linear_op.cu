// CUDA kernels of ElementwiseLinear and ElementwiseLinearGradient (contract in
// elementwise_linear_op.cc; the (N, D) view in elementwise_linear_op.h). dw and db sum over the N
// rows in double.
#include "core/cuda/cuda_context.h"
#include "core/operator.h"
#include "operators/common/reduce_cuda.cuh"
#include "operators/elementwise/elementwise_linear_op.h"

namespace caffe2 {
namespace {

__global__ void AffineKernel(int64_t n, int64_t D, const float* x, const float* w, const float* b,
                             float* y) {
  C2_CUDA_KERNEL_LOOP(i, n) {
    const int64_t d = i % D;
    y[i] = x[i] * w[d] + b[d];
  }
}

__global__ void ScaleColumnsKernel(int64_t n, int64_t D, const float* dy, const float* w,
                                   float* dx) {
  C2_CUDA_KERNEL_LOOP(i, n) { dx[i] = dy[i] * w[i % D]; }
}

struct ProductTerm {
  const float* a;
  const float* b;
  __device__ double operator()(int64_t i, int64_t) const {
    return static_cast<double>(a[i]) * b[i];
  }
};
struct ValueTerm {
  const float* a;
  __device__ double operator()(int64_t i, int64_t) const { return a[i]; }
};

class CudaElementwiseLinearOp final : public Operator<CUDAContext> {
 public:
  using Operator<CUDAContext>::Operator;
  bool RunOnDevice() override {
    const Tensor& X = Input(0);
    const Tensor& w = Input(1);
    const Tensor& b = Input(2);
    const NDShape s = CheckElementwiseLinearShapes(X, w, GetSingleArgument<int>("axis", 1));
    CheckElementwiseLinearBias(b, s);
    Tensor* Y = Output(0);
    Y->Resize(X.dims());
    float* y = Y->mutable_data<float>();
    const int64_t n = X.numel();
    if (n == 0) return true;
    AffineKernel<<<CudaBlocks(n), kCudaThreadsPerBlock, 0, context_.stream()>>>(
        n, s.D, X.data<float>(), w.data<float>(), b.data<float>(), y);
    C2_CUDA_KERNEL_LAUNCH_CHECK();
    return true;
  }
};

class CudaElementwiseLinearGradientOp final : public Operator<CUDAContext> {
 public:
  using Operator<CUDAContext>::Operator;
  bool RunOnDevice() override {
    const Tensor& dY = Input(0);
    const Tensor& X = Input(1);
    const Tensor& w = Input(2);
    const NDShape s = CheckElementwiseLinearShapes(X, w, GetSingleArgument<int>("axis", 1));
    CheckElementwiseLinearGradient(dY, X);
    Tensor* dw = Output(1);
    Tensor* db = Output(2);
    dw->Resize(s.D);
    db->Resize(s.D);
    // dw and db first: dX may be dY.
    SumOver<double>(s.N, s.D, 1, ProductTerm{dY.data<float>(), X.data<float>()}, 1.0,
                    dw->mutable_data<float>(), context_.stream());
    SumOver<double>(s.N, s.D, 1, ValueTerm{dY.data<float>()}, 1.0, db->mutable_data<float>(),
                    context_.stream());
    Tensor* dX = Output(0);
    dX->Resize(X.dims());
    float* dx = dX->mutable_data<float>();
    const int64_t n = X.numel();
    if (n == 0) return true;
    ScaleColumnsKernel<<<CudaBlocks(n), kCudaThreadsPerBlock, 0, context_.stream()>>>(
        n, s.D, dY.data<float>(), w.data<float>(), dx);
    C2_CUDA_KERNEL_LAUNCH_CHECK();
    return true;
  }
};

}  // namespace

REGISTER_CUDA_OPERATOR(ElementwiseLinear, CudaElementwiseLinearOp);
REGISTER_CUDA_OPERATOR(ElementwiseLinearGradient, CudaElementwiseLinearGradientOp);

}  // namespace caffe2
