// Sqr: [X] -> [Y], Y = X * X; float, double; Y may be X.
// Gradient: Scale(dY, scale=2) -> dY (overwriting the output gradient, as upstream does), then
// Mul([dY, X]) -> dX.
#include "core/gradient.h"
#include "operators/common/elementwise_op_base.h"

namespace caffe2 {
namespace {

class GetSqrGradient final : public GradientMakerBase {
  using GradientMakerBase::GradientMakerBase;
  std::vector<OperatorDef> GetGradientDefs() override {
    return {CreateOperatorDef("Scale", "", {GO(0)}, {GO(0)}, {MakeArgument<float>("scale", 2.0f)}),
            CreateOperatorDef("Mul", "", {GO(0), I(0)}, {GI(0)})};
  }
};

}  // namespace

REGISTER_CPU_OPERATOR(Sqr, UnaryOp<functors::Sqr, FloatTypes>);
OPERATOR_SCHEMA(Sqr)
    .NumInputs(1)
    .NumOutputs(1)
    .PointwiseCostInference(1)
    .AllowInplace({{0, 0}})
    .IdenticalTypeAndShape()
    .SetDoc("Y = X * X, elementwise.");
REGISTER_GRADIENT(Sqr, GetSqrGradient);

}  // namespace caffe2
