// CUDA kernels of SumElements, SumElementsGradient and SumSqrElements (contracts in
// sum_elements_op.cc and sum_sqr_elements_op.cc): one block sums the whole tensor, accumulating in
// double like the CPU kernels. dSum is read on the device.
#include "core/cuda/cuda_context.h"
#include "core/operator.h"
#include "operators/common/elementwise_cpu.h"  // TypeList, DispatchType
#include "operators/common/reduce_cuda.cuh"

namespace caffe2 {
namespace {

template <class T, bool kSquare>
struct ReadValue {
  const T* x;
  __device__ double operator()(int64_t i, int64_t) const {
    const double v = x[i];
    return kSquare ? v * v : v;
  }
};

template <bool kSquare>
class CudaSumElementsOp final : public Operator<CUDAContext> {
 public:
  using Operator<CUDAContext>::Operator;
  bool RunOnDevice() override {
    const Tensor& X = Input(0);
    const bool average = GetSingleArgument<bool>("average", false);
    C2_ENFORCE(!average || X.numel() > 0, "cannot average an empty tensor ",
               Tensor::DimsString(X.dims()));
    using Types = std::conditional_t<kSquare, TypeList<float, double>, TypeList<float>>;
    const bool ok = DispatchType(X.meta(), Types{}, [&](auto tag) {
      using T = typename decltype(tag)::type;
      Tensor* Y = Output(0);
      Y->Resize(std::vector<int64_t>{});
      const double scale = average ? 1.0 / static_cast<double>(X.numel()) : 1.0;
      SumOver<double>(1, 1, X.numel(), ReadValue<T, kSquare>{X.template data<T>()}, scale,
                      Y->template mutable_data<T>(), context_.stream());
    });
    C2_ENFORCE(ok, "unsupported type ", X.meta().name, " (supported: ", TypeNames(Types{}), ")");
    return true;
  }
};

__global__ void FillFromScalar(int64_t n, const float* dsum, float scale, float* dx) {
  const float g = *dsum * scale;
  C2_CUDA_KERNEL_LOOP(i, n) { dx[i] = g; }
}

class CudaSumElementsGradientOp final : public Operator<CUDAContext> {
 public:
  using Operator<CUDAContext>::Operator;
  bool RunOnDevice() override {
    const Tensor& X = Input(0);
    const Tensor& dY = Input(1);
    C2_ENFORCE(dY.IsType<float>() && dY.numel() == 1, "dSum must be one float, got ",
               dY.DebugString());
    const float scale =
        GetSingleArgument<bool>("average", false) ? 1.f / static_cast<float>(X.numel()) : 1.f;
    Tensor* dX = Output(0);
    dX->Resize(X.dims());
    float* dx = dX->mutable_data<float>();
    const int64_t n = X.numel();
    if (n == 0) return true;
    FillFromScalar<<<CudaBlocks(n), kCudaThreadsPerBlock, 0, context_.stream()>>>(
        n, dY.data<float>(), scale, dx);
    C2_CUDA_KERNEL_LAUNCH_CHECK();
    return true;
  }
};

}  // namespace

REGISTER_CUDA_OPERATOR(SumElements, CudaSumElementsOp<false>);
REGISTER_CUDA_OPERATOR(SumSqrElements, CudaSumElementsOp<true>);
REGISTER_CUDA_OPERATOR(SumElementsGradient, CudaSumElementsGradientOp);

}  // namespace caffe2
