// Sigmoid: [X] -> [Y], Y = 1 / (1 + exp(-X)); float, double; Y may be X.
// SigmoidGradient: [Y, dY] -> [dX], dX = dY Y (1 - Y).
#include "core/gradient.h"
#include "operators/common/elementwise_eigen.h"
#include "operators/common/elementwise_op_base.h"

namespace caffe2 {
namespace {

class GetSigmoidGradient final : public GradientMakerBase {
  using GradientMakerBase::GradientMakerBase;
  std::vector<OperatorDef> GetGradientDefs() override {
    return SingleGradientDef("SigmoidGradient", "", {O(0), GO(0)}, {GI(0)});
  }
};

}  // namespace

REGISTER_CPU_OPERATOR(Sigmoid, UnaryOp<functors::Sigmoid, FloatTypes, EigenUnaryLoop>);
OPERATOR_SCHEMA(Sigmoid)
    .NumInputs(1)
    .NumOutputs(1)
    .PointwiseCostInference(1)
    .AllowInplace({{0, 0}})
    .IdenticalTypeAndShape()
    .SetDoc("Y = 1 / (1 + exp(-X)), elementwise.");
REGISTER_GRADIENT(Sigmoid, GetSigmoidGradient);
REGISTER_CPU_OPERATOR(SigmoidGradient, UnaryGradientOp<functors::SigmoidGradient, FloatTypes>);
OPERATOR_SCHEMA(SigmoidGradient)
    .NumInputs(2)
    .NumOutputs(1)
    .AllowInplace({{1, 0}})
    .IdenticalTypeAndShapeOfInput(1);

}  // namespace caffe2
