// Add: [A, B] -> [C], C = A + B with the legacy broadcast of B (spec ops §1.2.10); int32, int64,
// float, double. C may be A, or B when not broadcasting.
// Gradient: without a `broadcast` argument both inputs alias dC; with it, dA aliases dC and
// dB = SumReduceLike([dC, B]) (arguments copied).
#include "core/gradient.h"
#include "operators/common/elementwise_op_base.h"

namespace caffe2 {
namespace {

class GetAddGradient final : public GradientMakerBase {
  using GradientMakerBase::GradientMakerBase;
  std::vector<OperatorDef> GetGradientDefs() override {
    SetDense(0, GO(0));
    if (!ArgumentHelper(Def()).HasArgument("broadcast")) {
      SetDense(1, GO(0));
      return {};
    }
    return SingleGradientDef("SumReduceLike", "", {GO(0), I(1)}, {GI(1)});
  }
};

}  // namespace

REGISTER_CPU_OPERATOR(Add, BinaryOp<functors::Add, NumericTypes, false>);
OPERATOR_SCHEMA(Add)
    .NumInputs(2)
    .NumOutputs(1)
    .PointwiseCostInference(1)
    .AllowInplace({{0, 0}, {1, 0}})
    .TensorInference(BinaryOutputInference(false))
    .SetDoc("C = A + B; B broadcasts over A with broadcast=1 (axis, axis_str, order).")
    .Arg("broadcast", "Pass 1 to broadcast B over A")
    .Arg("axis", "Axis of A where B's dims start (default: B aligned with A's trailing dims)")
    .Arg("axis_str", "The axis as a letter of `order`")
    .Arg("order", "Layout letters for axis_str (NCHW)");
REGISTER_GRADIENT(Add, GetAddGradient);

}  // namespace caffe2
