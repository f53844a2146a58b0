// CUDA kernels of ReduceFront{Sum,Mean}, ReduceBack{Sum,Mean} and their gradients (contracts in
// reduce_front_back_op.cc). With the optional `lengths` input the op runs its CPU kernel
// (GPUFallbackOp): per-output prefixes are rare and small.
#include "core/cuda/cuda_context.h"
#include "core/cuda/gpu_fallback_op.h"
#include "core/operator.h"
#include "operators/common/reduce_cuda.cuh"
#include "operators/reduce/reduce_front_back.h"

namespace caffe2 {
namespace {

struct ReadX {
  const float* x;
  __device__ float operator()(int64_t i, int64_t) const { return x[i]; }
};

template <bool kFront, bool kMean>
class CudaReduceFrontBackOp final : public Operator<CUDAContext> {
 public:
  using Operator<CUDAContext>::Operator;
  bool RunOnDevice() override {
    if (InputSize() > 1) return fallback_.Run(*this);
    const Tensor& X = Input(0);
    CheckReduceFrontBackInput(X);
    const ReduceView v = MakeReduceView(X, GetSingleArgument<int>("num_reduce_dim", 1), kFront);
    Tensor* Y = Output(0);
    Y->Resize(v.out_dims);
    float* y = Y->mutable_data<float>();
    const int64_t count = kFront ? v.rows : v.cols;
    const float scale = kMean && count > 0 ? 1.f / static_cast<float>(count) : 1.f;
    // Front: out[j] sums X[i, j] over rows (pre = rows, n = cols); Back: over cols.
    SumOver<float>(kFront ? v.rows : 1, kFront ? v.cols : v.rows, kFront ? 1 : v.cols,
                   ReadX{X.data<float>()}, scale, y, context_.stream());
    return true;
  }

 private:
  LazyGPUFallback fallback_;
};

template <bool kFront, bool kMean>
class CudaReduceFrontBackGradientOp final : public Operator<CUDAContext> {
 public:
  using Operator<CUDAContext>::Operator;
  bool RunOnDevice() override {
    if (InputSize() > 2) return fallback_.Run(*this);
    const Tensor& dY = Input(0);
    const Tensor& X = Input(1);
    const ReduceView v = MakeReduceView(X, GetSingleArgument<int>("num_reduce_dim", 1), kFront);
    CheckReduceFrontBackGradient(dY, v);
    Tensor* dX = Output(0);
    dX->Resize(X.dims());
    float* dx = dX->mutable_data<float>();
    const int64_t count = kFront ? v.rows : v.cols;
    const float scale = kMean && count > 0 ? 1.f / static_cast<float>(count) : 1.f;
    BroadcastOver(kFront ? v.rows : 1, kFront ? v.cols : v.rows, kFront ? 1 : v.cols,
                  dY.data<float>(), scale, dx, context_.stream());
    return true;
  }

 private:
  LazyGPUFallback fallback_;
};

}  // namespace

REGISTER_CUDA_OPERATOR(ReduceFrontSum, CudaReduceFrontBackOp<true, false>);
REGISTER_CUDA_OPERATOR(ReduceFrontMean, CudaReduceFrontBackOp<true, true>);
REGISTER_CUDA_OPERATOR(ReduceBackSum, CudaReduceFrontBackOp<false, false>);
REGISTER_CUDA_OPERATOR(ReduceBackMean, CudaReduceFrontBackOp<false, true>);
REGISTER_CUDA_OPERATOR(ReduceFrontSumGradient, CudaReduceFrontBackGradientOp<true, false>);
REGISTER_CUDA_OPERATOR(ReduceFrontMeanGradient, CudaReduceFrontBackGradientOp<true, true>);
REGISTER_CUDA_OPERATOR(ReduceBackSumGradient, CudaReduceFrontBackGradientOp<false, false>);
REGISTER_CUDA_OPERATOR(ReduceBackMeanGradient, CudaReduceFrontBackGradientOp<false, true>);

}  // namespace caffe2
