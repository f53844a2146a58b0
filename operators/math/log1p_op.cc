// Log1p: [X] -> [Y], Y = log(1 + X); float, double; Y may be X.
// Log1pGradient: [X, dY] -> [dX], dX = dY / (1 + X).
#include "core/gradient.h"
#include "operators/common/elementwise_op_base.h"

namespace caffe2 {
namespace {

class GetLog1pGradient final : public GradientMakerBase {
  using GradientMakerBase::GradientMakerBase;
  std::vector<OperatorDef> GetGradientDefs() override {
    return SingleGradientDef("Log1pGradient", "", {I(0), GO(0)}, {GI(0)});
  }
};

}  // namespace

REGISTER_CPU_OPERATOR(Log1p, UnaryOp<functors::Log1p, FloatTypes>);
OPERATOR_SCHEMA(Log1p)
    .NumInputs(1)
    .NumOutputs(1)
    .PointwiseCostInference(4)
    .AllowInplace({{0, 0}})
    .IdenticalTypeAndShape()
    .Input(0, "X", "input tensor")
    .Output(0, "Y", "X's shape and type")
    .SetDoc("Y = log(1 + X), elementwise.");
REGISTER_GRADIENT(Log1p, GetLog1pGradient);
REGISTER_CPU_OPERATOR(Log1pGradient, UnaryGradientOp<functors::Log1pGradient, FloatTypes>);
OPERATOR_SCHEMA(Log1pGradient)
    .NumInputs(2)
    .NumOutputs(1)
    .AllowInplace({{1, 0}})
    .IdenticalTypeAndShapeOfInput(1);

}  // namespace caffe2
