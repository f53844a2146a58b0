// The device code Max, Min and Mean share (min_max_op.cu, mean_op.cu): a fold of the inputs into
// Y, and a scaling kernel. Contracts in min_max_op.cc and mean_op.cc: float and double, all inputs
// of one shape and type; Y may be X0.
#pragma once

#include "operators/common/elementwise_cuda.cuh"

namespace caffe2 {

using CudaNaryTypes = TypeList<float, double>;

enum class NaryFold { kMax, kMin, kSum };

template <class T>
__global__ void NaryAccumulateKernel(int64_t n, NaryFold kind, const T* x, T* y) {
  C2_CUDA_KERNEL_LOOP(i, n) {
    const T v = x[i], w = y[i];
    y[i] = kind == NaryFold::kMax   ? (v > w ? v : w)
           : kind == NaryFold::kMin ? (v < w ? v : w)
                                    : w + v;
  }
}

template <class T>
__global__ void NaryScaleKernel(int64_t n, T scale, const T* x, T* y) {
  C2_CUDA_KERNEL_LOOP(i, n) { y[i] = x[i] * scale; }
}

// Max, Min and Mean (kSum, scaled by 1/n): y = x0, then every other input folded in.
template <NaryFold kKind>
class CudaNaryOp final : public Operator<CUDAContext> {
 public:
  using Operator<CUDAContext>::Operator;
  bool RunOnDevice() override {
    CheckSameShapeAndType(*this, 0);
    const Tensor& X0 = Input(0);
    const bool ok = DispatchType(X0.meta(), CudaNaryTypes{}, [&](auto tag) {
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
        NaryAccumulateKernel<<<CudaBlocks(n), kCudaThreadsPerBlock, 0, stream>>>(
            n, kKind, Input(i).template data<T>(), y);
        C2_CUDA_KERNEL_LAUNCH_CHECK();
      }
      if (kKind == NaryFold::kSum && InputSize() > 1) {
        NaryScaleKernel<<<CudaBlocks(n), kCudaThreadsPerBlock, 0, stream>>>(
            n, T(1) / static_cast<T>(InputSize()), y, y);
        C2_CUDA_KERNEL_LAUNCH_CHECK();
      }
    });
    C2_ENFORCE(ok, "unsupported type ", X0.meta().name, " (supported: float, double)");
    return true;
  }
};

}  // namespace caffe2
