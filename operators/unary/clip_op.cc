// Clip: [X] -> [Y], Y = min(max(X, min), max) with float arguments `min` (default: lowest float)
// and `max` (default: largest float); float types; Y may be X.
// ClipGradient: [Y, dY] -> [dX] (min, max copied), dX = dY where min < Y < max, else 0.
#include "core/gradient.h"
#include "operators/unary/unary_args.h"
#include "operators/common/elementwise_op_base.h"

namespace caffe2 {
namespace {

class ClipOp final : public UnaryOp<functors::Clip, FloatTypes> {
 public:
  ClipOp(const OperatorDef& def, Workspace* ws) : UnaryOp(def, ws, ReadClip(def)) {}
};

class ClipGradientOp final : public UnaryGradientOp<functors::ClipGradient, FloatTypes> {
 public:
  ClipGradientOp(const OperatorDef& def, Workspace* ws)
      : UnaryGradientOp(def, ws, {ReadClip(def).lo, ReadClip(def).hi}) {}
};

class GetClipGradient final : public GradientMakerBase {
  using GradientMakerBase::GradientMakerBase;
  std::vector<OperatorDef> GetGradientDefs() override {
    return SingleGradientDef("ClipGradient", "", {O(0), GO(0)}, {GI(0)});
  }
};

}  // namespace

REGISTER_CPU_OPERATOR(Clip, ClipOp);
OPERATOR_SCHEMA(Clip)
    .NumInputs(1)
    .NumOutputs(1)
    .PointwiseCostInference(1)
    .AllowInplace({{0, 0}})
    .IdenticalTypeAndShape()
    .SetDoc("Y = X clipped to [min, max], elementwise.")
    .Arg("min", "float, default: the lowest float")
    .Arg("max", "float, default: the largest float");
REGISTER_GRADIENT(Clip, GetClipGradient);
REGISTER_CPU_OPERATOR(ClipGradient, ClipGradientOp);
OPERATOR_SCHEMA(ClipGradient)
    .NumInputs(2)
    .NumOutputs(1)
    .AllowInplace({{1, 0}})
    .IdenticalTypeAndShapeOfInput(1)
    .SetDoc("dX = dY where min < Y < max, else 0: [Y, dY] -> [dX].")
    .Arg("min", "(float, default the lowest float) the forward op's lower bound")
    .Arg("max", "(float, default the largest float) the forward op's upper bound");

}  // namespace caffe2
