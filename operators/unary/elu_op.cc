// Elu: [X] -> [Y], Y = X for X > 0, alpha (exp(X) - 1) otherwise (`alpha`, float, 1.0); float,
// double; Y may be X.
// EluGradient: [Y, dY] -> [dX] (alpha copied), dX = dY where Y > 0, else dY (Y + alpha).
#include "core/gradient.h"
#include "operators/unary/unary_args.h"
#include "operators/common/elementwise_op_base.h"

namespace caffe2 {
namespace {

class EluOp final : public UnaryOp<functors::Elu, FloatTypes> {
 public:
  EluOp(const OperatorDef& def, Workspace* ws) : UnaryOp(def, ws, {ReadEluAlpha(def)}) {}
};

class EluGradientOp final : public UnaryGradientOp<functors::EluGradient, FloatTypes> {
 public:
  EluGradientOp(const OperatorDef& def, Workspace* ws)
      : UnaryGradientOp(def, ws, {ReadEluAlpha(def)}) {}
};

class GetEluGradient final : public GradientMakerBase {
  using GradientMakerBase::GradientMakerBase;
  std::vector<OperatorDef> GetGradientDefs() override {
    return SingleGradientDef("EluGradient", "", {O(0), GO(0)}, {GI(0)});
  }
};

}  // namespace

REGISTER_CPU_OPERATOR(Elu, EluOp);
OPERATOR_SCHEMA(Elu)
    .NumInputs(1)
    .NumOutputs(1)
    .PointwiseCostInference(1)
    .AllowInplace({{0, 0}})
    .IdenticalTypeAndShape()
    .SetDoc("Y = X for X > 0, alpha (exp(X) - 1) otherwise (`alpha`, float, 1.0), elementwise.")
    .Arg("alpha", "float, default 1.0");
REGISTER_GRADIENT(Elu, GetEluGradient);
REGISTER_CPU_OPERATOR(EluGradient, EluGradientOp);
OPERATOR_SCHEMA(EluGradient)
    .NumInputs(2)
    .NumOutputs(1)
    .AllowInplace({{1, 0}})
    .IdenticalTypeAndShapeOfInput(1)
    .SetDoc("The gradient of Elu from its output: [Y, dY] -> [dX].")
    .Arg("alpha", "(float, default 1.0) the forward op's alpha");

}  // namespace caffe2
