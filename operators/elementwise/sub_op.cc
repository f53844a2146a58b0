// Sub: [A, B] -> [C], C = A - B with the legacy broadcast of B (spec ops §1.2.10); int32, int64,
// float, double. C may be A, or B when not broadcasting.
// Gradient: dA aliases dC; dB = Negative(dC), with a `broadcast` argument computed into
// "<dB>_autogen_pre_red" and reduced by SumReduceLike([., B]) (axis, axis_str, order copied).
#include "core/gradient.h"
#include "operators/common/elementwise_op_base.h"

namespace caffe2 {
namespace {

class GetSubGradient final : public GradientMakerBase {
  using GradientMakerBase::GradientMakerBase;
  bool CopyArguments() const override { return false; }
  std::vector<OperatorDef> GetGradientDefs() override {
    SetDense(0, GO(0));
    if (!ArgumentHelper(Def()).HasArgument("broadcast")) {
      return SingleGradientDef("Negative", "", {GO(0)}, {GI(1)});
    }
    const std::string pre_red = GI(1) + "_autogen_pre_red";
    return {CreateOperatorDef("Negative", "", {GO(0)}, {pre_red}),
            CreateOperatorDef("SumReduceLike", "", {pre_red, I(1)}, {GI(1)},
                              PresentArguments(Def(), {"axis", "axis_str", "order"}))};
  }
};

}  // namespace

REGISTER_CPU_OPERATOR(Sub, BinaryOp<functors::Sub, NumericTypes, false>);
OPERATOR_SCHEMA(Sub)
    .NumInputs(2)
    .NumOutputs(1)
    .PointwiseCostInference(1)
    .AllowInplace({{0, 0}, {1, 0}})
    .TensorInference(BinaryOutputInference(false))
    .SetDoc("C = A - B; B broadcasts over A with broadcast=1 (axis, axis_str, order).");
static OpSchema& c2_sub_args [[maybe_unused]] = AddBroadcastArgs(c2_op_schema_Sub);
REGISTER_GRADIENT(Sub, GetSubGradient);

}  // namespace caffe2
