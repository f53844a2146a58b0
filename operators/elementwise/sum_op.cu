// CUDA kernel of Sum (contract in sum_op.cc): Y = X0 + X1 + ..., float, double, int32, int64 and
// float16 (accumulated in float). Inputs on another device (a host tensor, another GPU) are first
// copied to this op's GPU. Y may be X0 (accumulate in place).
#include <cuda_fp16.h>

#include <memory>
#include <vector>

#include "core/cuda/cuda_context.h"
#include "core/cuda/cuda_launch.h"
#include "core/operator.h"
#include "operators/common/cuda_inputs.h"
#include "operators/common/elementwise_checks.h"
#include "operators/common/elementwise_cpu.h"  // TypeList, DispatchType
#include "operators/common/half_cuda.cuh"

namespace caffe2 {
namespace {

template <class T>
__global__ void AddKernel(int64_t n, const T* a, const T* b, T* y) {
  C2_CUDA_KERNEL_LOOP(i, n) { y[i] = a[i] + b[i]; }
}
template <>
__global__ void AddKernel<__half>(int64_t n, const __half* a, const __half* b, __half* y) {
  C2_CUDA_KERNEL_LOOP(i, n) { y[i] = __float2half(__half2float(a[i]) + __half2float(b[i])); }
}

class CudaSumOp final : public Operator<CUDAContext> {
 public:
  using Operator<CUDAContext>::Operator;
  bool RunOnDevice() override {
    const Tensor& x0 = Input(0);
    using Types = TypeList<float, double, int32_t, int64_t, float16>;
    const bool ok = DispatchType(x0.meta(), Types{}, [&](auto tag) {
      using T = typename decltype(tag)::type;
      Compute<T>();
    });
    C2_ENFORCE(ok, "unsupported input type ", x0.meta().name,
               " (float, double, int32, int64, float16)");
    return true;
  }

 private:
  template <class T>
  void Compute() {
    using D = typename CudaStorage<T>::type;
    const Tensor& x0 = Input(0);
    while (static_cast<int>(scratch_.size()) < InputSize()) {
      scratch_.push_back(std::make_unique<Tensor>());
    }
    std::vector<const D*> inputs;
    for (int i = 0; i < InputSize(); ++i) {
      const Tensor& xi = Input(i);
      if (i > 0) CheckSumInput(*this, i);
      inputs.push_back(
          reinterpret_cast<const D*>(OnDevice(xi, device(), scratch_[i].get()).template data<T>()));
    }
    Tensor* y = Output(0);
    const bool in_place = IsInputOutputAlias(0, 0);
    if (!in_place) y->Resize(x0.dims());
    D* out = reinterpret_cast<D*>(y->template mutable_data<T>());
    const int64_t n = x0.numel();
    if (n == 0) return;
    const int blocks = CudaBlocks(n);
    cudaStream_t stream = context_.stream();
    if (InputSize() == 1) {
      if (!in_place) {
        C2_CUDA_CHECK(
            cudaMemcpyAsync(out, inputs[0], n * sizeof(D), cudaMemcpyDeviceToDevice, stream));
      }
      return;
    }
    AddKernel<D><<<blocks, kCudaThreadsPerBlock, 0, stream>>>(n, inputs[0], inputs[1], out);
    C2_CUDA_KERNEL_LAUNCH_CHECK();
    for (int i = 2; i < InputSize(); ++i) {
      AddKernel<D><<<blocks, kCudaThreadsPerBlock, 0, stream>>>(n, out, inputs[i], out);
      C2_CUDA_KERNEL_LAUNCH_CHECK();
    }
  }

  std::vector<std::unique_ptr<Tensor>> scratch_;  // one per input, for copies from elsewhere
};

}  // namespace

REGISTER_CUDA_OPERATOR(Sum, CudaSumOp);

}  // namespace caffe2
