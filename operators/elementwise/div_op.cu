// CUDA kernels of Div (legacy broadcast of B, spec ops §1.2.10) and DivGradient (dA = dC / B,
// dB = -dC * C / B, same shapes): the contract, schema and gradient maker are the CPU op's
// (div_op.cc). Div on CUDA takes float types only: an integer division by zero cannot be reported
// from a kernel the way the CPU op reports it.
#include "operators/common/elementwise_checks.h"
#include "operators/common/elementwise_cuda.cuh"

namespace caffe2 {
namespace {

template <class T>
__global__ void DivGradientKernel(int64_t n, const T* b, const T* c, const T* dc, T* da, T* db) {
  C2_CUDA_KERNEL_LOOP(i, n) {
    const T g = dc[i] / b[i];
    const T ci = c[i];  // read before any write: da or db may alias an input
    da[i] = g;
    db[i] = -g * ci;
  }
}

class CudaDivGradientOp final : public Operator<CUDAContext> {
 public:
  using Operator<CUDAContext>::Operator;
  bool RunOnDevice() override {
    const Tensor& B = Input(0);
    const Tensor& C = Input(1);
    const Tensor& dC = Input(2);
    CheckDivGradientInputs(B, C, dC);
    const bool ok = DispatchType(B.meta(), TypeList<float, double>{}, [&](auto tag) {
      using T = typename decltype(tag)::type;
      const std::vector<int64_t> dims = B.dims();
      Tensor* dA = Output(0);
      Tensor* dB = Output(1);
      dA->Resize(dims);
      dB->Resize(dims);
      const int64_t n = B.numel();
      T* da = dA->template mutable_data<T>();
      T* db = dB->template mutable_data<T>();
      if (n == 0) return;
      DivGradientKernel<<<CudaBlocks(n), kCudaThreadsPerBlock, 0, context_.stream()>>>(
          n, B.template data<T>(), C.template data<T>(), dC.template data<T>(), da, db);
      C2_CUDA_KERNEL_LAUNCH_CHECK();
    });
    C2_ENFORCE(ok, "unsupported type ", B.meta().name, " (supported: float, double)");
    return true;
  }
};

}  // namespace

REGISTER_CUDA_OPERATOR(Div, CudaBinaryOp<functors::Div, CudaFloatTypes, false>);
REGISTER_CUDA_OPERATOR(DivGradient, CudaDivGradientOp);

}  // namespace caffe2
