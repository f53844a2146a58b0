// Cos: [X] -> [Y], Y = cos(X); float, double; Y may be X.
// CosGradient: [X, dY] -> [dX], dX = -sin(X) dY.
#include "core/gradient.h"
#include "operators/common/elementwise_op_base.h"

namespace caffe2 {
namespace {

class GetCosGradient final : public GradientMakerBase {
  using GradientMakerBase::GradientMakerBase;
  std::vector<OperatorDef> GetGradientDefs() override {
    return SingleGradientDef("CosGradient", "", {I(0), GO(0)}, {GI(0)});
  }
};

}  // namespace

REGISTER_CPU_OPERATOR(Cos, UnaryOp<functors::Cos, FloatTypes>);
OPERATOR_SCHEMA(Cos)
    .NumInputs(1)
    .NumOutputs(1)
    .PointwiseCostInference(4)
    .AllowInplace({{0, 0}})
    .IdenticalTypeAndShape()
    .Input(0, "X", "input tensor")
    .Output(0, "Y", "X's shape and type")
    .SetDoc("Y = cos(X), elementwise.");
REGISTER_GRADIENT(Cos, GetCosGradient);
REGISTER_CPU_OPERATOR(CosGradient, UnaryGradientOp<functors::CosGradient, FloatTypes>);
OPERATOR_SCHEMA(CosGradient)
    .NumInputs(2)
    .NumOutputs(1)
    .AllowInplace({{1, 0}})
    .IdenticalTypeAndShapeOfInput(1);

}  // namespace caffe2
