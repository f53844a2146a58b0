// Softsign: [X] -> [Y], Y = X / (1 + |X|); float, double; Y may be X, but then no gradient can be
// made (it reads X).
// SoftsignGradient: [X, dY] -> [dX], dX = dY / (1 + |X|)^2; not in place.
#include "core/gradient.h"
#include "operators/common/elementwise_op_base.h"

namespace caffe2 {
namespace {

class GetSoftsignGradient final : public GradientMakerBase {
  using GradientMakerBase::GradientMakerBase;
  std::vector<OperatorDef> GetGradientDefs() override {
    C2_ENFORCE(I(0) != O(0), "[Softsign] no gradient for in-place Softsign (it needs X)");
    return SingleGradientDef("SoftsignGradient", "", {I(0), GO(0)}, {GI(0)});
  }
};

}  // namespace

REGISTER_CPU_OPERATOR(Softsign, UnaryOp<functors::Softsign, FloatTypes>);
OPERATOR_SCHEMA(Softsign)
    .NumInputs(1)
    .NumOutputs(1)
    .PointwiseCostInference(1)
    .AllowInplace({{0, 0}})
    .IdenticalTypeAndShape()
    .SetDoc("Y = X / (1 + |X|), elementwise.");
REGISTER_GRADIENT(Softsign, GetSoftsignGradient);
REGISTER_CPU_OPERATOR(SoftsignGradient, UnaryGradientOp<functors::SoftsignGradient, FloatTypes>);
OPERATOR_SCHEMA(SoftsignGradient).NumInputs(2).NumOutputs(1).IdenticalTypeAndShapeOfInput(1);

}  // namespace caffe2
