// Reciprocal: [X] -> [Y], Y = 1 / X; float, double; Y may be X.
// ReciprocalGradient: [Y, dY] -> [dX], dX = -Y^2 dY.
#include "core/gradient.h"
#include "operators/common/elementwise_op_base.h"

namespace caffe2 {
namespace {

class GetReciprocalGradient final : public GradientMakerBase {
  using GradientMakerBase::GradientMakerBase;
  std::vector<OperatorDef> GetGradientDefs() override {
    return SingleGradientDef("ReciprocalGradient", "", {O(0), GO(0)}, {GI(0)});
  }
};

}  // namespace

REGISTER_CPU_OPERATOR(Reciprocal, UnaryOp<functors::Reciprocal, FloatTypes>);
OPERATOR_SCHEMA(Reciprocal)
    .NumInputs(1)
    .NumOutputs(1)
    .PointwiseCostInference(1)
    .AllowInplace({{0, 0}})
    .IdenticalTypeAndShape()
    .Input(0, "X", "input tensor")
    .Output(0, "Y", "X's shape and type")
    .SetDoc("Y = 1 / X, elementwise.");
REGISTER_GRADIENT(Reciprocal, GetReciprocalGradient);
REGISTER_CPU_OPERATOR(ReciprocalGradient,
                      UnaryGradientOp<functors::ReciprocalGradient, FloatTypes>);
OPERATOR_SCHEMA(ReciprocalGradient)
    .NumInputs(2)
    .NumOutputs(1)
    .AllowInplace({{1, 0}})
    .IdenticalTypeAndShapeOfInput(1);

}  // namespace caffe2
