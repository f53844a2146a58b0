// CUDA kernels of Mean and MeanGradient (contract, schema and gradient maker in mean_op.cc): float
// and double; MeanGradient takes [dY] and gives [dX0, dX1, ...], each dY / n; dX0 may be dY (it
// is written last).
#include "operators/elementwise/nary_op_cuda.cuh"

namespace caffe2 {
namespace {

class CudaMeanGradientOp final : public Operator<CUDAContext> {
 public:
  using Operator<CUDAContext>::Operator;
  bool RunOnDevice() override {
    const Tensor& dY = Input(0);
    const bool ok = DispatchType(dY.meta(), CudaNaryTypes{}, [&](auto tag) {
      using T = typename decltype(tag)::type;
      const int64_t n = dY.numel();
      const T scale = T(1) / static_cast<T>(OutputSize());
      for (int i = OutputSize() - 1; i >= 0; --i) {  // dX0 may be dY: written last
        Tensor* dX = Output(i);
        dX->Resize(dY.dims());
        T* dx = dX->template mutable_data<T>();
        if (n == 0) continue;
        NaryScaleKernel<<<CudaBlocks(n), kCudaThreadsPerBlock, 0, context_.stream()>>>(
            n, scale, dY.template data<T>(), dx);
        C2_CUDA_KERNEL_LAUNCH_CHECK();
      }
    });
    C2_ENFORCE(ok, "unsupported type ", dY.meta().name, " (supported: float, double)");
    return true;
  }
};

}  // namespace

REGISTER_CUDA_OPERATOR(Mean, CudaNaryOp<NaryFold::kSum>);
REGISTER_CUDA_OPERATOR(MeanGradient, CudaMeanGradientOp);

}  // namespace caffe2
