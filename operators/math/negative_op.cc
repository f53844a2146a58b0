// Negative: [X] -> [Y], Y = -X; int32, int64, float, double; Y may be X.
// Gradient: Negative(dY) -> dX.
#include "core/gradient.h"
#include "operators/common/elementwise_op_base.h"

namespace caffe2 {
namespace {

class GetNegativeGradient final : public GradientMakerBase {
  using GradientMakerBase::GradientMakerBase;
  std::vector<OperatorDef> GetGradientDefs() override {
    return SingleGradientDef("Negative", "", {GO(0)}, {GI(0)});
  }
};

}  // namespace

REGISTER_CPU_OPERATOR(Negative, UnaryOp<functors::Negative, NumericTypes>);
OPERATOR_SCHEMA(Negative)
    .NumInputs(1)
    .NumOutputs(1)
    .PointwiseCostInference(1)
    .AllowInplace({{0, 0}})
    .IdenticalTypeAndShape()
    .SetDoc("Y = -X, elementwise.");
REGISTER_GRADIENT(Negative, GetNegativeGradient);

}  // namespace caffe2
