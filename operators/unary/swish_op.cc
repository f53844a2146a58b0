// Swish: [X] -> [Y], Y = X sigmoid(X); float, double; Y may be X.
// SwishGradient: [X, Y, dY] -> [dX], dX = dY (s + X s (1 - s)), s = sigmoid(X). Upstream's gradient
// op takes Y too; it is accepted (and unused) so that serialized upstream training nets run.
#include "core/gradient.h"
#include "operators/common/elementwise_op_base.h"

namespace caffe2 {
namespace {

class GetSwishGradient final : public GradientMakerBase {
  using GradientMakerBase::GradientMakerBase;
  std::vector<OperatorDef> GetGradientDefs() override {
    return SingleGradientDef("SwishGradient", "", {I(0), O(0), GO(0)}, {GI(0)});
  }
};

}  // namespace

REGISTER_CPU_OPERATOR(Swish, UnaryOp<functors::Swish, FloatTypes>);
OPERATOR_SCHEMA(Swish)
    .NumInputs(1)
    .NumOutputs(1)
    .PointwiseCostInference(4)
    .AllowInplace({{0, 0}})
    .IdenticalTypeAndShape()
    .Input(0, "X", "input tensor")
    .Output(0, "Y", "X * sigmoid(X), X's shape and type")
    .SetDoc("Y = X * sigmoid(X), elementwise (the SiLU activation).");
REGISTER_GRADIENT(Swish, GetSwishGradient);
REGISTER_CPU_OPERATOR(SwishGradient,
                      UnaryGradientOp<functors::SwishGradient, FloatTypes, /*kDYInput=*/2>);
OPERATOR_SCHEMA(SwishGradient)
    .NumInputs(3)
    .NumOutputs(1)
    .AllowInplace({{2, 0}})
    .IdenticalTypeAndShapeOfInput(2);

}  // namespace caffe2
