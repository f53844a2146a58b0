// Mul: [A, B] -> [C], C = A * B with the legacy broadcast of B (spec ops §1.2.10); int32, int64,
// float, double. C may be A, or B when not broadcasting, but then no gradient can be made.
// Gradient: dA = Mul([dC, B]) (broadcast arguments copied), dB = Mul([dC, A]); with a `broadcast`
// argument dB is computed into "<dB>_autogen_pre_red" and reduced by SumReduceLike([., B]).
#include "core/gradient.h"
#include "operators/common/elementwise_op_base.h"

namespace caffe2 {
namespace {

class GetMulGradient final : public GradientMakerBase {
  using GradientMakerBase::GradientMakerBase;
  bool CopyArguments() const override { return false; }
  std::vector<OperatorDef> GetGradientDefs() override {
    C2_ENFORCE(I(0) != O(0) && I(1) != O(0), "[Mul] no gradient for in-place Mul (output '", O(0),
               "' overwrites an input)");
    if (!ArgumentHelper(Def()).HasArgument("broadcast")) {
      return {CreateOperatorDef("Mul", "", {GO(0), I(1)}, {GI(0)}),
              CreateOperatorDef("Mul", "", {GO(0), I(0)}, {GI(1)})};
    }
    const std::string pre_red = GI(1) + "_autogen_pre_red";
    return {CreateOperatorDef("Mul", "", {GO(0), I(1)}, {GI(0)},
                              PresentArguments(Def(), {"broadcast", "axis", "axis_str", "order"})),
            CreateOperatorDef("Mul", "", {GO(0), I(0)}, {pre_red}),
            CreateOperatorDef("SumReduceLike", "", {pre_red, I(1)}, {GI(1)},
                              PresentArguments(Def(), {"axis", "axis_str", "order"}))};
  }
};

}  // namespace

REGISTER_CPU_OPERATOR(Mul, BinaryOp<functors::Mul, NumericTypes, false>);
OPERATOR_SCHEMA(Mul)
    .NumInputs(2)
    .NumOutputs(1)
    .PointwiseCostInference(1)
    .AllowInplace({{0, 0}, {1, 0}})
    .TensorInference(BinaryOutputInference(false))
    .SetDoc("C = A * B; B broadcasts over A with broadcast=1 (axis, axis_str, order).");
static OpSchema& c2_mul_args [[maybe_unused]] = AddBroadcastArgs(c2_op_schema_Mul);
REGISTER_GRADIENT(Mul, GetMulGradient);

}  // namespace caffe2
