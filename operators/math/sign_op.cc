// Sign: [X] -> [Y], Y = -1, 0 or 1 as X < 0, X == 0 (or NaN), X > 0; int32, int64, float, double;
// Y may be X. No gradient: upstream marks Sign SHOULD_NOT_DO_GRADIENT (its derivative is 0 almost
// everywhere, so a net that asks for it has a bug).
#include "core/gradient.h"
#include "operators/common/elementwise_op_base.h"

namespace caffe2 {

REGISTER_CPU_OPERATOR(Sign, UnaryOp<functors::Sign, NumericTypes>);
OPERATOR_SCHEMA(Sign)
    .NumInputs(1)
    .NumOutputs(1)
    .PointwiseCostInference(1)
    .AllowInplace({{0, 0}})
    .IdenticalTypeAndShape()
    .Input(0, "X", "input tensor")
    .Output(0, "Y", "the sign of X: -1, 0 or 1, X's shape and type")
    .SetDoc("Y = sign(X), elementwise.");
REGISTER_GRADIENT(Sign, ShouldNotDoGradient);

}  // namespace caffe2
