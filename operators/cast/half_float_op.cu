// CUDA kernels of FloatToHalf and HalfToFloat (contract in cast_op.cc): IEEE conversions with
// round-to-nearest-even, the same as the CPU kernels.
#include <cuda_fp16.h>

#include "core/cuda/cuda_context.h"
#include "core/cuda/cuda_launch.h"
#include "core/operator.h"

namespace caffe2 {
namespace {

__global__ void FloatToHalfKernel(int64_t n, const float* x, __half* y) {
  C2_CUDA_KERNEL_LOOP(i, n) { y[i] = __float2half_rn(x[i]); }
}
__global__ void HalfToFloatKernel(int64_t n, const __half* x, float* y) {
  C2_CUDA_KERNEL_LOOP(i, n) { y[i] = __half2float(x[i]); }
}

template <bool kToHalf>
class CudaHalfFloatOp final : public Operator<CUDAContext> {
 public:
  using Operator<CUDAContext>::Operator;
  bool RunOnDevice() override {
    const Tensor& X = Input(0);
    C2_ENFORCE(kToHalf ? X.IsType<float>() : X.IsType<float16>(), "expects a ",
               kToHalf ? "float" : "float16", " tensor, got ", X.DebugString());
    Tensor* Y = Output(0);
    Y->Resize(X.dims());
    const int64_t n = X.numel();
    if (kToHalf) {
      __half* y = reinterpret_cast<__half*>(Y->mutable_data<float16>());
      if (n == 0) return true;
      FloatToHalfKernel<<<CudaBlocks(n), kCudaThreadsPerBlock, 0, context_.stream()>>>(
          n, X.data<float>(), y);
    } else {
      float* y = Y->mutable_data<float>();
      if (n == 0) return true;
      HalfToFloatKernel<<<CudaBlocks(n), kCudaThreadsPerBlock, 0, context_.stream()>>>(
          n, reinterpret_cast<const __half*>(X.data<float16>()), y);
    }
    C2_CUDA_KERNEL_LAUNCH_CHECK();
    return true;
  }
};

}  // namespace

REGISTER_CUDA_OPERATOR(FloatToHalf, CudaHalfFloatOp<true>);
REGISTER_CUDA_OPERATOR(HalfToFloat, CudaHalfFloatOp<false>);

}  // namespace caffe2
