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
    .SetDoc("C = A + B; B broadcasts over A with broadcast=1 (axis, axis_str, order).");
static OpSchema& c2_add_args [[maybe_unused]] = AddBroadcastArgs(c2_op_schema_Add);
REGISTER_GRADIENT(Add, GetAddGradient);

}  // namespace caffe2
