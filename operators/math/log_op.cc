// Log: [X] -> [Y], Y = log(X); float, double; Y may be X.
// Gradient: Div([dY, X]) -> dX.
#include "core/gradient.h"
#include "operators/common/elementwise_eigen.h"
#include "operators/common/elementwise_op_base.h"

namespace caffe2 {
namespace {

class GetLogGradient final : public GradientMakerBase {
  using GradientMakerBase::GradientMakerBase;
  std::vector<OperatorDef> GetGradientDefs() override {
    return SingleGradientDef("Div", "", {GO(0), I(0)}, {GI(0)});
  }
};

}  // namespace

REGISTER_CPU_OPERATOR(Log, UnaryOp<functors::Log, FloatTypes, EigenUnaryLoop>);
OPERATOR_SCHEMA(Log)
    .NumInputs(1)
    .NumOutputs(1)
    .PointwiseCostInference(1)
    .AllowInplace({{0, 0}})
    .IdenticalTypeAndShape()
    .SetDoc("Y = log(X), elementwise.");
REGISTER_GRADIENT(Log, GetLogGradient);

}  // namespace caffe2
