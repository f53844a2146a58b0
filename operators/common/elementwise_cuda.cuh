// CUDA operator templates that apply the functors of operators/common/elementwise_functors.h, the
// GPU twins of operators/common/elementwise_op_base.h (same contracts, same type lists, same
// legacy broadcast of B). Include from .cu files only; each op's .cu instantiates what it uses.
//
// CudaUnaryOp<F, Types>:             [X] -> [Y], Y = F(X)
// CudaUnaryGradientOp<F, Types, kDYInput>: [S, ..., dY] -> [dX], dX = F(S, dY), dY input kDYInput
// CudaBinaryOp<F, Types, kBool>:     [A, B] -> [C], C = F(A, B), B broadcast as (pre, n, post)
// Ops with arguments construct F from the def in their constructor, as the CPU ops do.
// float16 tensors are computed in float (half_cuda.cuh): the type lists below add float16, a
// CUDA-only type for these ops (for fp16 training; their CPU kernels take float types only).
#pragma once

#include <type_traits>

#include "core/cuda/cuda_context.h"
#include "core/cuda/cuda_launch.h"
#include "core/operator.h"
#include "operators/common/broadcast.h"
#include "operators/common/elementwise_cpu.h"  // TypeList, DispatchType, TypeNames
#include "operators/common/elementwise_functors.h"
#include "operators/common/half_cuda.cuh"
#include "operators/common/elementwise_checks.h"

namespace caffe2 {
namespace elementwise_cuda {

template <class F, class TIn, class TOut>
__global__ void UnaryKernel(int64_t n, const TIn* x, TOut* y, F f) {
  C2_CUDA_KERNEL_LOOP(i, n) { y[i] = FromCompute<TOut>(f(ToCompute(x[i]))); }
}

template <class F, class TIn, class TOut>
__global__ void BinaryKernel(int64_t total, int64_t n, int64_t post, const TIn* a, const TIn* b,
                             TOut* c, F f) {
  C2_CUDA_KERNEL_LOOP(i, total) {
    c[i] = FromCompute<TOut>(f(ToCompute(a[i]), ToCompute(b[(i / post) % n])));
  }
}

}  // namespace elementwise_cuda

// The type lists of the elementwise CUDA registrations (operators/elementwise, operators/unary).
using CudaFloatTypes = TypeList<float, double, float16>;
using CudaNumericTypes = TypeList<float, double, int32_t, int64_t, float16>;
using CudaNumericAndBoolTypes = TypeList<float, double, int32_t, int64_t, bool>;

template <class F, class Types>
class CudaUnaryOp : public Operator<CUDAContext> {
 public:
  CudaUnaryOp(const OperatorDef& def, Workspace* ws, F f = F())
      : Operator<CUDAContext>(def, ws), f_(f) {}
  bool RunOnDevice() override {
    const Tensor& X = Input(0);
    const bool ok = DispatchType(X.meta(), Types{}, [&](auto tag) {
      using T = typename decltype(tag)::type;
      // bool for Not, else T (float16 computes in float and stores float16)
      using Out = std::conditional_t<std::is_same_v<T, bool>, bool, T>;
      Tensor* Y = Output(0);
      Y->Resize(X.dims());
      const int64_t n = X.numel();
      auto* y = MutableStorageData<Out>(Y);
      if (n == 0) return;
      elementwise_cuda::UnaryKernel<<<CudaBlocks(n), kCudaThreadsPerBlock, 0, context_.stream()>>>(
          n, StorageData<T>(X), y, f_);
      C2_CUDA_KERNEL_LAUNCH_CHECK();
    });
    C2_ENFORCE(ok, "unsupported type ", X.meta().name,
               " for X (supported on CUDA: ", TypeNames(Types{}), ")");
    return true;
  }

 private:
  F f_;
};

template <class F, class Types, int kDYInput = 1>
class CudaUnaryGradientOp : public Operator<CUDAContext> {
 public:
  CudaUnaryGradientOp(const OperatorDef& def, Workspace* ws, F f = F())
      : Operator<CUDAContext>(def, ws), f_(f) {}
  bool RunOnDevice() override {
    const Tensor& S = Input(0);
    const Tensor& dY = Input(kDYInput);
    CheckUnaryGradientInputs(S, dY);
    const bool ok = DispatchType(S.meta(), Types{}, [&](auto tag) {
      using T = typename decltype(tag)::type;
      Tensor* dX = Output(0);
      dX->Resize(S.dims());
      const int64_t n = S.numel();
      auto* dx = MutableStorageData<T>(dX);
      if (n == 0) return;
      elementwise_cuda::BinaryKernel<<<CudaBlocks(n), kCudaThreadsPerBlock, 0, context_.stream()>>>(
          n, n, 1, StorageData<T>(S), StorageData<T>(dY), dx, f_);
      C2_CUDA_KERNEL_LAUNCH_CHECK();
    });
    C2_ENFORCE(ok, "unsupported type ", S.meta().name, " (supported on CUDA: ", TypeNames(Types{}),
               ")");
    return true;
  }

 private:
  F f_;
};

template <class F, class Types, bool kBoolOutput>
class CudaBinaryOp : public Operator<CUDAContext> {
 public:
  CudaBinaryOp(const OperatorDef& def, Workspace* ws)
      : Operator<CUDAContext>(def, ws), args_(ReadBroadcastArgs(ArgumentHelper(def))) {}
  bool RunOnDevice() override {
    const Tensor& A = Input(0);
    const Tensor& B = Input(1);
    const BroadcastSizes sizes = CheckBinaryInputs(*this, A, B, args_);
    const bool ok = DispatchType(A.meta(), Types{}, [&](auto tag) {
      using T = typename decltype(tag)::type;
      using Out = std::conditional_t<kBoolOutput, bool, T>;
      Tensor* C = Output(0);
      C->Resize(A.dims());
      const int64_t total = A.numel();
      auto* c = MutableStorageData<Out>(C);
      if (total == 0) return;
      elementwise_cuda::
          BinaryKernel<<<CudaBlocks(total), kCudaThreadsPerBlock, 0, context_.stream()>>>(
              total, sizes.n, sizes.post, StorageData<T>(A), StorageData<T>(B), c, F());
      C2_CUDA_KERNEL_LAUNCH_CHECK();
    });
    C2_ENFORCE(ok, "unsupported type ", A.meta().name, " (supported on CUDA: ", TypeNames(Types{}),
               ")");
    return true;
  }

 private:
  BroadcastArgs args_;
};

}  // namespace caffe2
