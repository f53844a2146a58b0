// Softplus: [X] -> [Y], Y = log(1 + exp(X)); float, double; Y may be X.
// SoftplusGradient: [Y, dY] -> [dX], dX = dY (1 - exp(-Y)).
#include "core/gradient.h"
#include "operators/common/elementwise_eigen.h"
#include "operators/common/elementwise_op_base.h"

namespace caffe2 {
namespace {

class GetSoftplusGradient final : public GradientMakerBase {
  using GradientMakerBase::GradientMakerBase;
  std::vector<OperatorDef> GetGradientDefs() override {
    return SingleGradientDef("SoftplusGradient", "", {O(0), GO(0)}, {GI(0)});
  }
};

}  // namespace

REGISTER_CPU_OPERATOR(Softplus, UnaryOp<functors::Softplus, FloatTypes, EigenUnaryLoop>);
OPERATOR_SCHEMA(Softplus)
    .NumInputs(1)
    .NumOutputs(1)
    .PointwiseCostInference(1)
    .AllowInplace({{0, 0}})
    .IdenticalTypeAndShape()
    .SetDoc("Y = log(1 + exp(X)), elementwise.");
REGISTER_GRADIENT(Softplus, GetSoftplusGradient);
REGISTER_CPU_OPERATOR(SoftplusGradient, UnaryGradientOp<functors::SoftplusGradient, FloatTypes>);
OPERATOR_SCHEMA(SoftplusGradient)
    .NumInputs(2)
    .NumOutputs(1)
    .AllowInplace({{1, 0}})
    .IdenticalTypeAndShapeOfInput(1);

}  // namespace caffe2
