// CUDA kernels of ArgMax and ArgMin (contract in arg_max_op.cc, view in arg_max_op.h): one thread
// per output position scans the reduced axis and keeps the first extremum, as the CPU kernel does.
#include "core/cuda/cuda_context.h"
#include "core/cuda/cuda_launch.h"
#include "core/operator.h"
#include "operators/common/elementwise_cpu.h"  // TypeList, DispatchType
#include "operators/index/arg_max_op.h"

namespace caffe2 {
namespace {

template <bool kMax, class T>
__global__ void ArgKernel(int64_t outer, int64_t n, int64_t inner, const T* x, int64_t* y) {
  C2_CUDA_KERNEL_LOOP(t, outer * inner) {
    const int64_t o = t / inner, i = t % inner;
    const T* base = x + o * n * inner + i;
    int64_t best = 0;
    for (int64_t k = 1; k < n; ++k) {
      if (kMax ? base[k * inner] > base[best * inner] : base[k * inner] < base[best * inner]) {
        best = k;
      }
    }
    y[t] = best;
  }
}

template <bool kMax>
class CudaArgOp final : public Operator<CUDAContext> {
 public:
  CudaArgOp(const OperatorDef& def, Workspace* ws)
      : Operator<CUDAContext>(def, ws),
        axis_(GetSingleArgument<int>("axis", -1)),
        keepdims_(GetSingleArgument<bool>("keepdims", true)) {}

  bool RunOnDevice() override {
    const Tensor& X = Input(0);
    using Types = TypeList<float, double, int32_t, int64_t>;
    const bool ok = DispatchType(X.meta(), Types{}, [&](auto tag) {
      using T = typename decltype(tag)::type;
      const ArgView v = MakeArgView(X, axis_, keepdims_);
      Tensor* Y = Output(0);
      Y->Resize(v.out_dims);
      int64_t* y = Y->mutable_data<int64_t>();
      const int64_t total = v.outer * v.inner;
      if (total == 0) return;
      ArgKernel<kMax><<<CudaBlocks(total), kCudaThreadsPerBlock, 0, context_.stream()>>>(
          v.outer, v.n, v.inner, X.template data<T>(), y);
      C2_CUDA_KERNEL_LAUNCH_CHECK();
    });
    C2_ENFORCE(ok, "unsupported input type ", X.meta().name);
    return true;
  }

 private:
  int axis_;
  bool keepdims_;
};

}  // namespace

REGISTER_CUDA_OPERATOR(ArgMax, CudaArgOp<true>);
REGISTER_CUDA_OPERATOR(ArgMin, CudaArgOp<false>);

}  // namespace caffe2
