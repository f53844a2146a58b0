// LeakyRelu: [X] -> [Y], Y = X for X >= 0, alpha X otherwise (`alpha`, float, 0.01); float,
// double; Y may be X.
// LeakyReluGradient: [Y, dY] -> [dX] (alpha copied), dX = dY where Y >= 0, else alpha dY.
#include "core/gradient.h"
#include "operators/unary/unary_args.h"
#include "operators/common/elementwise_op_base.h"

namespace caffe2 {
namespace {

class LeakyReluOp final : public UnaryOp<functors::LeakyRelu, FloatTypes> {
 public:
  LeakyReluOp(const OperatorDef& def, Workspace* ws)
      : UnaryOp(def, ws, {ReadLeakyReluAlpha(def)}) {}
};

class LeakyReluGradientOp final : public UnaryGradientOp<functors::LeakyReluGradient, FloatTypes> {
 public:
  LeakyReluGradientOp(const OperatorDef& def, Workspace* ws)
      : UnaryGradientOp(def, ws, {ReadLeakyReluAlpha(def)}) {}
};

class GetLeakyReluGradient final : public GradientMakerBase {
  using GradientMakerBase::GradientMakerBase;
  std::vector<OperatorDef> GetGradientDefs() override {
    return SingleGradientDef("LeakyReluGradient", "", {O(0), GO(0)}, {GI(0)});
  }
};

}  // namespace

REGISTER_CPU_OPERATOR(LeakyRelu, LeakyReluOp);
OPERATOR_SCHEMA(LeakyRelu)
    .NumInputs(1)
    .NumOutputs(1)
    .PointwiseCostInference(1)
    .AllowInplace({{0, 0}})
    .IdenticalTypeAndShape()
    .SetDoc("Y = X for X >= 0, alpha X otherwise (`alpha`, float, 0.01), elementwise.")
    .Arg("alpha", "float, default 0.01");
REGISTER_GRADIENT(LeakyRelu, GetLeakyReluGradient);
REGISTER_CPU_OPERATOR(LeakyReluGradient, LeakyReluGradientOp);
OPERATOR_SCHEMA(LeakyReluGradient)
    .NumInputs(2)
    .NumOutputs(1)
    .AllowInplace({{1, 0}})
    .IdenticalTypeAndShapeOfInput(1)
    .SetDoc("The gradient of LeakyRelu from its output: [Y, dY] -> [dX].")
    .Arg("alpha", "(float, default 0.01) the forward op's slope for negative inputs");

}  // namespace caffe2
