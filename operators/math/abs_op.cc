// Abs: [X] -> [Y], Y = |X|; int32, int64, float, double; Y may be X.
// AbsGradient: [X, dY] -> [dX], dX = sign(X) dY.
#include "core/gradient.h"
#include "operators/common/elementwise_op_base.h"

namespace caffe2 {
namespace {

class GetAbsGradient final : public GradientMakerBase {
  using GradientMakerBase::GradientMakerBase;
  std::vector<OperatorDef> GetGradientDefs() override {
    return SingleGradientDef("AbsGradient", "", {I(0), GO(0)}, {GI(0)});
  }
};

}  // namespace

REGISTER_CPU_OPERATOR(Abs, UnaryOp<functors::Abs, NumericTypes>);
OPERATOR_SCHEMA(Abs)
    .NumInputs(1)
    .NumOutputs(1)
    .PointwiseCostInference(1)
    .AllowInplace({{0, 0}})
    .IdenticalTypeAndShape()
    .SetDoc("Y = |X|, elementwise.");
REGISTER_GRADIENT(Abs, GetAbsGradient);
REGISTER_CPU_OPERATOR(AbsGradient, UnaryGradientOp<functors::AbsGradient, FloatTypes>);
OPERATOR_SCHEMA(AbsGradient)
    .NumInputs(2)
    .NumOutputs(1)
    .AllowInplace({{1, 0}})
    .IdenticalTypeAndShapeOfInput(1);

}  // namespace caffe2
