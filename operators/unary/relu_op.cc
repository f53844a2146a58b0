// Relu: [X] -> [Y], Y = max(X, 0) (spec ops §1.2.6; `order` from brew is ignored); float,
// double; Y may be X.
// ReluGradient: [Y, dY] -> [dX], dX = dY where Y > 0, else 0; dX may overwrite dY.
#include "core/gradient.h"
#include "operators/common/elementwise_op_base.h"

namespace caffe2 {
namespace {

class GetReluGradient final : public GradientMakerBase {
  using GradientMakerBase::GradientMakerBase;
  std::vector<OperatorDef> GetGradientDefs() override {
    return SingleGradientDef("ReluGradient", "", {O(0), GO(0)}, {GI(0)});
  }
};

}  // namespace

REGISTER_CPU_OPERATOR(Relu, UnaryOp<functors::Relu, FloatTypes>);
OPERATOR_SCHEMA(Relu)
    .NumInputs(1)
    .NumOutputs(1)
    .PointwiseCostInference(1)
    .AllowInplace({{0, 0}})
    .IdenticalTypeAndShape()
    .SetDoc("Y = max(X, 0), elementwise.");
REGISTER_GRADIENT(Relu, GetReluGradient);
REGISTER_CPU_OPERATOR(ReluGradient, UnaryGradientOp<functors::ReluGradient, FloatTypes>);
OPERATOR_SCHEMA(ReluGradient)
    .NumInputs(2)
    .NumOutputs(1)
    .AllowInplace({{1, 0}})
    .IdenticalTypeAndShapeOfInput(1);

}  // namespace caffe2
