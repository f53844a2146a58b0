// Tanh: [X] -> [Y], Y = tanh(X); float, double; Y may be X.
// TanhGradient: [Y, dY] -> [dX], dX = dY (1 - Y^2).
#include "core/gradient.h"
#include "operators/common/elementwise_eigen.h"
#include "operators/common/elementwise_op_base.h"

namespace caffe2 {
namespace {

class GetTanhGradient final : public GradientMakerBase {
  using GradientMakerBase::GradientMakerBase;
  std::vector<OperatorDef> GetGradientDefs() override {
    return SingleGradientDef("TanhGradient", "", {O(0), GO(0)}, {GI(0)});
  }
};

}  // namespace

REGISTER_CPU_OPERATOR(Tanh, UnaryOp<functors::Tanh, FloatTypes, EigenUnaryLoop>);
OPERATOR_SCHEMA(Tanh)
    .NumInputs(1)
    .NumOutputs(1)
    .PointwiseCostInference(1)
    .AllowInplace({{0, 0}})
    .IdenticalTypeAndShape()
    .SetDoc("Y = tanh(X), elementwise.");
REGISTER_GRADIENT(Tanh, GetTanhGradient);
REGISTER_CPU_OPERATOR(TanhGradient, UnaryGradientOp<functors::TanhGradient, FloatTypes>);
OPERATOR_SCHEMA(TanhGradient)
    .NumInputs(2)
    .NumOutputs(1)
    .AllowInplace({{1, 0}})
    .IdenticalTypeAndShapeOfInput(1);

}  // namespace caffe2
