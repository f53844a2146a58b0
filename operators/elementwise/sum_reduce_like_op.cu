// CUDA kernels of SumReduceLike (contract in sum_reduce_like_op.cc: C shaped like B holds A
// summed over the dims B does not cover; float types accumulate in double, integers in int64) and
// DivGradient (div_op.cc: dA = dC / B, dB = -dC * C / B, same shapes).
#include "core/cuda/cuda_context.h"
#include "core/operator.h"
#include "operators/common/broadcast.h"
#include "operators/common/elementwise_cpu.h"  // TypeList, DispatchType
#include "operators/common/reduce_cuda.cuh"
#include "operators/common/elementwise_checks.h"

namespace caffe2 {
namespace {

template <class T>
struct ReadA {
  const T* a;
  __device__ T operator()(int64_t i, int64_t) const { return a[i]; }
};

class CudaSumReduceLikeOp final : public Operator<CUDAContext> {
 public:
  CudaSumReduceLikeOp(const OperatorDef& def, Workspace* ws)
      : Operator<CUDAContext>(def, ws), args_(ReadBroadcastArgs(ArgumentHelper(def), true)) {}
  bool RunOnDevice() override {
    const Tensor& A = Input(0);
    const Tensor& B = Input(1);
    const BroadcastSizes sizes = ComputeBroadcastSizes(A.dims(), B.dims(), args_);
    using Types = TypeList<float, double, int32_t, int64_t>;
    const std::vector<int64_t> b_dims = B.dims();  // B may be the output
    const bool ok = DispatchType(A.meta(), Types{}, [&](auto tag) {
      using T = typename decltype(tag)::type;
      using Acc = std::conditional_t<std::is_floating_point_v<T>, double, int64_t>;
      Tensor* C = Output(0);
      C->Resize(b_dims);
      if (sizes.pre * sizes.post == 1) {  // nothing to sum: B covers all of A
        C2_CUDA_CHECK(cudaMemcpyAsync(C->template mutable_data<T>(), A.template data<T>(),
                                      A.nbytes(), cudaMemcpyDeviceToDevice, context_.stream()));
        return;
      }
      SumOver<Acc>(sizes.pre, sizes.n, sizes.post, ReadA<T>{A.template data<T>()}, Acc(1),
                   C->template mutable_data<T>(), context_.stream());
    });
    C2_ENFORCE(ok, "unsupported type ", A.meta().name, " (supported: ", TypeNames(Types{}), ")");
    return true;
  }

 private:
  BroadcastArgs args_;
};

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

REGISTER_CUDA_OPERATOR(SumReduceLike, CudaSumReduceLikeOp);
REGISTER_CUDA_OPERATOR(DivGradient, CudaDivGradientOp);

}  // namespace caffe2
