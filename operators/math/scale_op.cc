// Scale: [X] -> [Y], Y = scale * X with the float argument `scale` (1.0); float types; Y may be X
// (spec ops §1.2.11). Gradient: Scale(dY) -> dX with the same `scale`.
#include "core/gradient.h"
#include "operators/unary/unary_args.h"
#include "operators/common/elementwise_op_base.h"

namespace caffe2 {
namespace {

class ScaleOp final : public UnaryOp<functors::Scale, FloatTypes> {
 public:
  ScaleOp(const OperatorDef& def, Workspace* ws) : UnaryOp(def, ws, {ReadScale(def)}) {}
};

class GetScaleGradient final : public GradientMakerBase {
  using GradientMakerBase::GradientMakerBase;
  std::vector<OperatorDef> GetGradientDefs() override {
    return SingleGradientDef("Scale", "", {GO(0)}, {GI(0)});
  }
};

}  // namespace

REGISTER_CPU_OPERATOR(Scale, ScaleOp);
OPERATOR_SCHEMA(Scale)
    .NumInputs(1)
    .NumOutputs(1)
    .PointwiseCostInference(1)
    .AllowInplace({{0, 0}})
    .IdenticalTypeAndShape()
    .SetDoc("Y = scale * X.")
    .Arg("scale", "float, default 1.0");
REGISTER_GRADIENT(Scale, GetScaleGradient);

}  // namespace caffe2
