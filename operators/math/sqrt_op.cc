// Sqrt: [X] -> [Y], Y = sqrt(X); float, double; Y may be X.
// Gradient: Scale(dY, scale=0.5) -> dX, then Div([dX, Y]) -> dX.
#include "core/gradient.h"
#include "operators/common/elementwise_eigen.h"
#include "operators/common/elementwise_op_base.h"

namespace caffe2 {
namespace {

class GetSqrtGradient final : public GradientMakerBase {
  using GradientMakerBase::GradientMakerBase;
  std::vector<OperatorDef> GetGradientDefs() override {
    return {CreateOperatorDef("Scale", "", {GO(0)}, {GI(0)}, {MakeArgument<float>("scale", 0.5f)}),
            CreateOperatorDef("Div", "", {GI(0), O(0)}, {GI(0)})};
  }
};

}  // namespace

REGISTER_CPU_OPERATOR(Sqrt, UnaryOp<functors::Sqrt, FloatTypes, EigenUnaryLoop>);
OPERATOR_SCHEMA(Sqrt)
    .NumInputs(1)
    .NumOutputs(1)
    .PointwiseCostInference(1)
    .AllowInplace({{0, 0}})
    .IdenticalTypeAndShape()
    .SetDoc("Y = sqrt(X), elementwise.");
REGISTER_GRADIENT(Sqrt, GetSqrtGradient);

}  // namespace caffe2
