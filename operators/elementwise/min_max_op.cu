// CUDA kernels of Max, Min and their gradients (contract, schemas and gradient makers in
// min_max_op.cc): float and double; MaxGradient / MinGradient take [Y, dY, X0, X1, ...] and give
// [dX0, dX1, ...], dY where Xi equals Y, else 0; dX0 may be dY (it is written last).
#include "operators/elementwise/nary_op_cuda.cuh"

namespace caffe2 {
namespace {

template <class T>
__global__ void SelectGradientKernel(int64_t n, const T* x, const T* y, const T* dy, T* dx) {
  C2_CUDA_KERNEL_LOOP(i, n) { dx[i] = x[i] == y[i] ? dy[i] : T(0); }
}

class CudaMinMaxGradientOp final : public Operator<CUDAContext> {
 public:
  using Operator<CUDAContext>::Operator;
  bool RunOnDevice() override {
    CheckSameShapeAndType(*this, 0);
    const Tensor& Y = Input(0);
    const bool ok = DispatchType(Y.meta(), CudaNaryTypes{}, [&](auto tag) {
      using T = typename decltype(tag)::type;
      const int64_t n = Y.numel();
      for (int i = OutputSize() - 1; i >= 0; --i) {  // dX0 may be dY: written last
        Tensor* dX = Output(i);
        dX->Resize(Y.dims());
        T* dx = dX->template mutable_data<T>();
        if (n == 0) continue;
        SelectGradientKernel<<<CudaBlocks(n), kCudaThreadsPerBlock, 0, context_.stream()>>>(
            n, Input(i + 2).template data<T>(), Y.template data<T>(), Input(1).template data<T>(),
            dx);
        C2_CUDA_KERNEL_LAUNCH_CHECK();
      }
    });
    C2_ENFORCE(ok, "unsupported type ", Y.meta().name, " (supported: float, double)");
    return true;
  }
};

}  // namespace

REGISTER_CUDA_OPERATOR(Max, CudaNaryOp<NaryFold::kMax>);
REGISTER_CUDA_OPERATOR(Min, CudaNaryOp<NaryFold::kMin>);
REGISTER_CUDA_OPERATOR(MaxGradient, CudaMinMaxGradientOp);
REGISTER_CUDA_OPERATOR(MinGradient, CudaMinMaxGradientOp);

}  // namespace caffe2
