// Exp: [X] -> [Y], Y = exp(X); float, double; Y may be X.
// Gradient: Mul([Y, dY]) -> dX.
#include "core/gradient.h"
#include "operators/common/elementwise_eigen.h"
#include "operators/common/elementwise_op_base.h"

namespace caffe2 {
namespace {

class GetExpGradient final : public GradientMakerBase {
  using GradientMakerBase::GradientMakerBase;
  std::vector<OperatorDef> GetGradientDefs() override {
    return SingleGradientDef("Mul", "", {O(0), GO(0)}, {GI(0)});
  }
};

}  // namespace

REGISTER_CPU_OPERATOR(Exp, UnaryOp<functors::Exp, FloatTypes, EigenUnaryLoop>);
OPERATOR_SCHEMA(Exp)
    .NumInputs(1)
    .NumOutputs(1)
    .PointwiseCostInference(1)
    .AllowInplace({{0, 0}})
    .IdenticalTypeAndShape()
    .SetDoc("Y = exp(X), elementwise.");
REGISTER_GRADIENT(Exp, GetExpGradient);

}  // namespace caffe2
