// CUDA kernels of the n-input elementwise ops and Pow, with their CPU ops' contracts:
//   Max / Min / Mean and MaxGradient / MinGradient / MeanGradient (min_max_op.cc, mean_op.cc):
//   float, double; Y may be X0, and dX0 may be dY (it is written last).
//   Pow (pow_op.cc): a scalar `exponent`, or an exponent tensor with the legacy broadcast (run by
//   the binary template of elementwise_cuda.cuh).
#include <memory>

#include "operators/common/elementwise_cuda.cuh"

namespace caffe2 {
namespace {

using CudaFloatTypes = TypeList<float, double>;

enum class Nary { kMax, kMin, kSum };

template <class T>
__global__ void AccumulateKernel(int64_t n, Nary kind, const T* x, T* y) {
  C2_CUDA_KERNEL_LOOP(i, n) {
    const T v = x[i], w = y[i];
    y[i] = kind == Nary::kMax ? (v > w ? v : w) : kind == Nary::kMin ? (v < w ? v : w) : w + v;
  }
}

template <class T>
__global__ void ScaleKernel(int64_t n, T scale, const T* x, T* y) {
  C2_CUDA_KERNEL_LOOP(i, n) { y[i] = x[i] * scale; }
}

// Max, Min (kMean false) and Mean: y = x0, then folds every other input in; Mean scales by 1/n.
template <Nary kKind>
class CudaNaryOp final : public Operator<CUDAContext> {
 public:
  using Operator<CUDAContext>::Operator;
  bool RunOnDevice() override {
    CheckSameShapeAndType(*this, 0);
    const Tensor& X0 = Input(0);
    const bool ok = DispatchType(X0.meta(), CudaFloatTypes{}, [&](auto tag) {
      using T = typename decltype(tag)::type;
      Tensor* Y = Output(0);
      Y->Resize(X0.dims());
      T* y = Y->template mutable_data<T>();
      const int64_t n = X0.numel();
      if (n == 0) return;
      cudaStream_t stream = context_.stream();
      if (!IsInputOutputAlias(0, 0)) {
        C2_CUDA_CHECK(cudaMemcpyAsync(y, X0.template data<T>(), n * sizeof(T),
                                      cudaMemcpyDeviceToDevice, stream));
      }
      for (int i = 1; i < InputSize(); ++i) {
        AccumulateKernel<<<CudaBlocks(n), kCudaThreadsPerBlock, 0, stream>>>(
            n, kKind, Input(i).template data<T>(), y);
        C2_CUDA_KERNEL_LAUNCH_CHECK();
      }
      if (kKind == Nary::kSum && InputSize() > 1) {
        ScaleKernel<<<CudaBlocks(n), kCudaThreadsPerBlock, 0, stream>>>(
            n, T(1) / static_cast<T>(InputSize()), y, y);
        C2_CUDA_KERNEL_LAUNCH_CHECK();
      }
    });
    C2_ENFORCE(ok, "unsupported type ", X0.meta().name, " (supported: float, double)");
    return true;
  }
};

template <class T>
__global__ void SelectGradientKernel(int64_t n, const T* x, const T* y, const T* dy, T* dx) {
  C2_CUDA_KERNEL_LOOP(i, n) { dx[i] = x[i] == y[i] ? dy[i] : T(0); }
}

// MaxGradient / MinGradient: [Y, dY, X0, X1, ...] -> [dX0, dX1, ...].
class CudaMinMaxGradientOp final : public Operator<CUDAContext> {
 public:
  using Operator<CUDAContext>::Operator;
  bool RunOnDevice() override {
    CheckSameShapeAndType(*this, 0);
    const Tensor& Y = Input(0);
    const bool ok = DispatchType(Y.meta(), CudaFloatTypes{}, [&](auto tag) {
      using T = typename decltype(tag)::type;
      const int64_t n = Y.numel();
      for (int i = OutputSize() - 1; i >= 0; --i) {  // dX0 may be dY: written last
        Tensor* dX = Output(i);
        dX->Resize(Y.dims());
        T* dx = dX->template mutable_data<T>();
        if (n == 0) continue;
        SelectGradientKernel<<<CudaBlocks(n), kCudaThreadsPerBlock, 0, context_.stream()>>>(
            n, Input(i + 2).template data<T>(), Y.template data<T>(),
            Input(1).template data<T>(), dx);
        C2_CUDA_KERNEL_LAUNCH_CHECK();
      }
    });
    C2_ENFORCE(ok, "unsupported type ", Y.meta().name, " (supported: float, double)");
    return true;
  }
};

// MeanGradient: [dY] -> [dX0, dX1, ...], each dY / n.
class CudaMeanGradientOp final : public Operator<CUDAContext> {
 public:
  using Operator<CUDAContext>::Operator;
  bool RunOnDevice() override {
    const Tensor& dY = Input(0);
    const bool ok = DispatchType(dY.meta(), CudaFloatTypes{}, [&](auto tag) {
      using T = typename decltype(tag)::type;
      const int64_t n = dY.numel();
      const T scale = T(1) / static_cast<T>(OutputSize());
      for (int i = OutputSize() - 1; i >= 0; --i) {  // dX0 may be dY: written last
        Tensor* dX = Output(i);
        dX->Resize(dY.dims());
        T* dx = dX->template mutable_data<T>();
        if (n == 0) continue;
        ScaleKernel<<<CudaBlocks(n), kCudaThreadsPerBlock, 0, context_.stream()>>>(
            n, scale, dY.template data<T>(), dx);
        C2_CUDA_KERNEL_LAUNCH_CHECK();
      }
    });
    C2_ENFORCE(ok, "unsupported type ", dY.meta().name, " (supported: float, double)");
    return true;
  }
};

struct PowScalar {
  float exponent;
  template <class T>
  __device__ T operator()(T x) const {
    return pow(x, static_cast<T>(exponent));
  }
};

class CudaPowOp final : public Operator<CUDAContext> {
 public:
  CudaPowOp(const OperatorDef& def, Workspace* ws)
      : Operator<CUDAContext>(def, ws), has_exponent_(PowHasExponentArgument(*this)) {
    if (has_exponent_) {
      scalar_ = std::make_unique<CudaUnaryOp<PowScalar, CudaFloatTypes>>(
          def, ws, PowScalar{GetSingleArgument<float>("exponent", 0.f)});
    } else {
      tensor_ = std::make_unique<CudaBinaryOp<functors::Pow, CudaFloatTypes, false>>(def, ws);
    }
  }
  bool RunOnDevice() override { return has_exponent_ ? scalar_->Run() : tensor_->Run(); }

 private:
  bool has_exponent_;
  std::unique_ptr<OperatorBase> scalar_, tensor_;
};

}  // namespace

REGISTER_CUDA_OPERATOR(Max, CudaNaryOp<Nary::kMax>);
REGISTER_CUDA_OPERATOR(Min, CudaNaryOp<Nary::kMin>);
REGISTER_CUDA_OPERATOR(Mean, CudaNaryOp<Nary::kSum>);
REGISTER_CUDA_OPERATOR(MaxGradient, CudaMinMaxGradientOp);
REGISTER_CUDA_OPERATOR(MinGradient, CudaMinMaxGradientOp);
REGISTER_CUDA_OPERATOR(MeanGradient, CudaMeanGradientOp);
REGISTER_CUDA_OPERATOR(Pow, CudaPowOp);

}  // namespace caffe2
