// CUDA kernel of SumReduceLike (contract in sum_reduce_like_op.cc: C shaped like B holds A summed
// over the dims B does not cover; float types accumulate in double, integers in int64).
#include "core/cuda/cuda_context.h"
#include "core/operator.h"
#include "operators/common/broadcast.h"
#include "operators/common/elementwise_cpu.h"  // TypeList, DispatchType
#include "operators/common/reduce_cuda.cuh"

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

}  // namespace

REGISTER_CUDA_OPERATOR(SumReduceLike, CudaSumReduceLikeOp);

}  // namespace caffe2
