// Sin: [X] -> [Y], Y = sin(X); float, double; Y may be X.
// SinGradient: [X, dY] -> [dX], dX = cos(X) dY.
#include "core/gradient.h"
#include "operators/common/elementwise_op_base.h"

namespace caffe2 {
namespace {

class GetSinGradient final : public GradientMakerBase {
  using GradientMakerBase::GradientMakerBase;
  std::vector<OperatorDef> GetGradientDefs() override {
    return SingleGradientDef("SinGradient", "", {I(0), GO(0)}, {GI(0)});
  }
};

}  // namespace

REGISTER_CPU_OPERATOR(Sin, UnaryOp<functors::Sin, FloatTypes>);
OPERATOR_SCHEMA(Sin)
    .NumInputs(1)
    .NumOutputs(1)
    .PointwiseCostInference(4)
    .AllowInplace({{0, 0}})
    .IdenticalTypeAndShape()
    .Input(0, "X", "input tensor")
    .Output(0, "Y", "X's shape and type")
    .SetDoc("Y = sin(X), elementwise.");
REGISTER_GRADIENT(Sin, GetSinGradient);
REGISTER_CPU_OPERATOR(SinGradient, UnaryGradientOp<functors::SinGradient, FloatTypes>);
OPERATOR_SCHEMA(SinGradient)
    .NumInputs(2)
    .NumOutputs(1)
    .AllowInplace({{1, 0}})
    .IdenticalTypeAndShapeOfInput(1);

}  // namespace caffe2
