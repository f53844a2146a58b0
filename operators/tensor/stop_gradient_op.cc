// StopGradient: [X] -> [Y], the identity (in place allowed; otherwise a copy, as Copy does); no
// gradient flows through it.
#include "core/gradient.h"
#include "operators/tensor/copy_op.h"

namespace caffe2 {

REGISTER_CPU_OPERATOR(StopGradient, CopyOp);
OPERATOR_SCHEMA(StopGradient)
    .NumInputs(1)
    .NumOutputs(1)
    .AllowInplace({{0, 0}})
    .IdenticalTypeAndShape()
    .SetDoc("Passes the input through; gradients stop here.");
REGISTER_GRADIENT(StopGradient, NoGradient);

}  // namespace caffe2
