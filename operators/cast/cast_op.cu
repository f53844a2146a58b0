// CUDA kernels of Cast, FloatToHalf and HalfToFloat (contracts in cast_op.h and cast_op.cc).
// Cast: one thread per element converts through double, exactly as the CPU kernel does (float16
// through float with round-to-nearest-even; bool is value != 0). In place, the result is built in
// a scratch tensor and copied into X.
#include <cuda_fp16.h>

#include "core/cuda/cuda_launch.h"
#include "operators/common/elementwise_cpu.h"  // TypeList, DispatchType
#include "operators/common/half_cuda.cuh"
#include "operators/cast/cast_op.h"
#include "operators/tensor/tensor_util_cuda.h"

namespace caffe2 {
namespace {

using CastTypes =
    TypeList<float, double, float16, int32_t, int64_t, int16_t, int8_t, uint16_t, uint8_t, bool>;

template <class T>
__device__ inline double CastToDouble(T v) {
  return static_cast<double>(v);
}
template <>
__device__ inline double CastToDouble<__half>(__half v) {
  return static_cast<double>(__half2float(v));
}

template <class T>
__device__ inline T CastFromDouble(double v) {
  return static_cast<T>(v);
}
template <>
__device__ inline __half CastFromDouble<__half>(double v) {
  return __float2half_rn(static_cast<float>(v));
}
template <>
__device__ inline bool CastFromDouble<bool>(double v) {
  return v != 0;
}

template <class Src, class Dst>
__global__ void CastKernel(int64_t n, const Src* x, Dst* y) {
  C2_CUDA_KERNEL_LOOP(i, n) { y[i] = CastFromDouble<Dst>(CastToDouble<Src>(x[i])); }
}

class CudaCastOp final : public Operator<CUDAContext> {
 public:
  CudaCastOp(const OperatorDef& def, Workspace* ws)
      : Operator<CUDAContext>(def, ws), to_(CastTarget(def)), scratch_(device()) {}

  bool RunOnDevice() override {
    const Tensor& X = Input(0);
    CheckOnDevice(X, device(), "X");
    const bool in_place = IsInputOutputAlias(0, 0);
    Tensor* out = in_place ? &scratch_ : Output(0);
    out->Resize(X.dims());
    const bool known_source = DispatchType(X.meta(), CastTypes{}, [&](auto src_tag) {
      using Src = typename decltype(src_tag)::type;
      const bool known_target =
          DispatchType(TypeMeta::FromDataType(to_), CastTypes{}, [&](auto dst_tag) {
            using Dst = typename decltype(dst_tag)::type;
            auto* y = MutableStorageData<Dst>(out);
            const int64_t n = X.numel();
            if (n == 0) return;
            CastKernel<<<CudaBlocks(n), kCudaThreadsPerBlock, 0, context_.stream()>>>(
                n, StorageData<Src>(X), y);
            C2_CUDA_KERNEL_LAUNCH_CHECK();
          });
      C2_ENFORCE(known_target, "cannot cast to ", DataTypeName(to_));
    });
    C2_ENFORCE(known_source, "cannot cast from ", X.meta().name);
    if (in_place) {
      // X's storage is about to be replaced while the kernel may still read it: keep it alive
      // until the next run, when this run's work is done.
      Tensor* Y = Output(0);
      if (Y->has_storage()) retired_.ShareData(*Y);
      CopyTensorData(&context_, scratch_, Y);
    }
    return true;
  }

 private:
  DataType to_;
  Tensor scratch_;
  Tensor retired_;
};

// FloatToHalf and HalfToFloat: IEEE conversions with round-to-nearest-even, as on the CPU.
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
    CheckHalfFloatInput(X, kToHalf);
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

REGISTER_CUDA_OPERATOR(Cast, CudaCastOp);
REGISTER_CUDA_OPERATOR(FloatToHalf, CudaHalfFloatOp<true>);
REGISTER_CUDA_OPERATOR(HalfToFloat, CudaHalfFloatOp<false>);

}  // namespace caffe2
