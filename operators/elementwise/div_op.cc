// Div: [A, B] -> [C], C = A / B with the legacy broadcast of B (spec ops §1.2.10); int32, int64,
// float, double (integer division by zero is an error). C may be A.
// DivGradient: [B, C, dC] -> [dA, dB], dA = dC / B, dB = -dC * C / B; same shapes only, so the
// gradient of a broadcasting Div is an error.
#include "core/gradient.h"
#include "operators/common/elementwise_op_base.h"

namespace caffe2 {
namespace {

class DivGradientOp final : public Operator<CPUContext> {
 public:
  using Operator<CPUContext>::Operator;
  bool RunOnDevice() override {
    const Tensor& B = Input(0);
    const Tensor& C = Input(1);
    const Tensor& dC = Input(2);
    CheckDivGradientInputs(B, C, dC);
    const bool ok = DispatchType(B.meta(), FloatTypes{}, [&](auto tag) {
      using T = typename decltype(tag)::type;
      const T* b = B.template data<T>();
      const T* c = C.template data<T>();
      const T* dc = dC.template data<T>();
      Tensor* dA = Output(0);
      Tensor* dB = Output(1);
      dA->Resize(B.dims());
      dB->Resize(B.dims());
      T* da = dA->template mutable_data<T>();
      T* db = dB->template mutable_data<T>();
      for (int64_t i = 0; i < B.numel(); ++i) {
        const T g = dc[i] / b[i];
        db[i] = -g * c[i];
        da[i] = g;
      }
    });
    C2_ENFORCE(ok, "unsupported type ", B.meta().name, " (supported: float, double)");
    return true;
  }
};

class GetDivGradient final : public GradientMakerBase {
  using GradientMakerBase::GradientMakerBase;
  std::vector<OperatorDef> GetGradientDefs() override {
    C2_ENFORCE(ArgumentHelper(Def()).GetSingleArgument<int>("broadcast", 0) == 0,
               "[Div] the gradient of a broadcasting Div is not supported");
    return SingleGradientDef("DivGradient", "", {I(1), O(0), GO(0)}, {GI(0), GI(1)});
  }
};

}  // namespace

REGISTER_CPU_OPERATOR(Div, BinaryOp<functors::Div, NumericTypes, false>);
OPERATOR_SCHEMA(Div)
    .NumInputs(2)
    .NumOutputs(1)
    .PointwiseCostInference(1)
    .AllowInplace({{0, 0}})
    .TensorInference(BinaryOutputInference(false))
    .SetDoc("C = A / B; B broadcasts over A with broadcast=1 (axis, axis_str, order).");
static OpSchema& c2_div_args [[maybe_unused]] = AddBroadcastArgs(c2_op_schema_Div);
REGISTER_GRADIENT(Div, GetDivGradient);
REGISTER_CPU_OPERATOR(DivGradient, DivGradientOp);
OPERATOR_SCHEMA(DivGradient).NumInputs(3).NumOutputs(2).AllowInplace({{2, 0}});

}  // namespace caffe2
