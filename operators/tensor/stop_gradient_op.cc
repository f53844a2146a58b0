// StopGradient: [X] -> [Y], the identity (in place allowed); no gradient flows through it.
#include "core/gradient.h"
#include "core/operator.h"

namespace caffe2 {
namespace {

class StopGradientOp final : public Operator<CPUContext> {
 public:
  using Operator<CPUContext>::Operator;
  bool RunOnDevice() override {
    if (!IsInputOutputAlias(0, 0)) Output(0)->CopyFrom(Input(0));
    return true;
  }
};

}  // namespace

REGISTER_CPU_OPERATOR(StopGradient, StopGradientOp);
OPERATOR_SCHEMA(StopGradient)
    .NumInputs(1)
    .NumOutputs(1)
    .AllowInplace({{0, 0}})
    .IdenticalTypeAndShape()
    .SetDoc("Passes the input through; gradients stop here.");
REGISTER_GRADIENT(StopGradient, NoGradient);

}  // namespace caffe2
