// Cube: [X] -> [Y], Y = X^3; float, double; Y may be X.
// CubeGradient: [X, dY] -> [dX], dX = 3 X^2 dY.
#include "core/gradient.h"
#include "operators/common/elementwise_op_base.h"

namespace caffe2 {
namespace {

class GetCubeGradient final : public GradientMakerBase {
  using GradientMakerBase::GradientMakerBase;
  std::vector<OperatorDef> GetGradientDefs() override {
    return SingleGradientDef("CubeGradient", "", {I(0), GO(0)}, {GI(0)});
  }
};

}  // namespace

REGISTER_CPU_OPERATOR(Cube, UnaryOp<functors::Cube, FloatTypes>);
OPERATOR_SCHEMA(Cube)
    .NumInputs(1)
    .NumOutputs(1)
    .PointwiseCostInference(2)
    .AllowInplace({{0, 0}})
    .IdenticalTypeAndShape()
    .Input(0, "X", "input tensor")
    .Output(0, "Y", "X's shape and type")
    .SetDoc("Y = X^3, elementwise.");
REGISTER_GRADIENT(Cube, GetCubeGradient);
REGISTER_CPU_OPERATOR(CubeGradient, UnaryGradientOp<functors::CubeGradient, FloatTypes>);
OPERATOR_SCHEMA(CubeGradient)
    .NumInputs(2)
    .NumOutputs(1)
    .AllowInplace({{1, 0}})
    .IdenticalTypeAndShapeOfInput(1);

}  // namespace caffe2
