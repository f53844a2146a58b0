// SumReduceLike: [A, B] -> [C] shaped like B: A summed over the dims that B does not cover, under
// the legacy broadcast rules with broadcast forced on (args axis, axis_str, order; spec ops
// §1.2.10). int32, int64, float, double. The gradient path of broadcasting Add/Sub/Mul uses it.
#include <algorithm>

#include "core/gradient.h"
#include "operators/common/elementwise_op_base.h"

namespace caffe2 {
namespace {

class SumReduceLikeOp final : public Operator<CPUContext> {
 public:
  SumReduceLikeOp(const OperatorDef& def, Workspace* ws)
      : Operator<CPUContext>(def, ws), args_(ReadBroadcastArgs(ArgumentHelper(def), true)) {}
  bool RunOnDevice() override {
    const Tensor& A = Input(0);
    const Tensor& B = Input(1);
    const BroadcastSizes sizes = ComputeBroadcastSizes(A.dims(), B.dims(), args_);
    const std::vector<int64_t> b_dims = B.dims();
    const bool ok = DispatchType(A.meta(), NumericTypes{}, [&](auto tag) {
      using T = typename decltype(tag)::type;
      const T* a = A.template data<T>();
      Tensor* C = Output(0);
      if (b_dims == A.dims()) {
        C->Resize(b_dims);
        std::copy(a, a + A.numel(), C->template mutable_data<T>());
        return;
      }
      C->Resize(b_dims);
      SumReduceLoop(sizes, a, C->template mutable_data<T>());
    });
    C2_ENFORCE(ok, "unsupported type ", A.meta().name, " (supported: ", TypeNames(NumericTypes{}),
               ")");
    return true;
  }

 private:
  BroadcastArgs args_;
};

}  // namespace

REGISTER_CPU_OPERATOR(SumReduceLike, SumReduceLikeOp);
OPERATOR_SCHEMA(SumReduceLike)
    .NumInputs(2)
    .NumOutputs(1)
    .TensorInference([](const OperatorDef&, const std::vector<TensorShape>& in) {
      TensorShape out = in.at(1);
      out.set_data_type(in.at(0).data_type());
      return std::vector<TensorShape>{out};
    })
    .SetDoc("C has B's shape: A summed over the dims of A that B does not cover.")
    .Arg("broadcast",
         "(int) accepted and ignored (Add's gradient maker copies all of Add's args): "
         "SumReduceLike always broadcasts")
    .Arg("axis",
         "(int, default -1) the dim of A where B's dims start; -1 aligns B with A's trailing dims")
    .Arg("axis_str", "(string) the axis as one letter of order, e.g. \"C\" (not with axis)")
    .Arg("order", "(string, default \"NCHW\") the dim letters axis_str is looked up in");
REGISTER_GRADIENT(SumReduceLike, ShouldNotDoGradient);

}  // namespace caffe2
