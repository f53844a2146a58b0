// Ceil: [X] -> [Y], Y = ceil(X); float, double; Y may be X.
// No gradient (as upstream: the derivative is 0 almost everywhere).
#include "core/gradient.h"
#include "operators/common/elementwise_op_base.h"

namespace caffe2 {

REGISTER_CPU_OPERATOR(Ceil, UnaryOp<functors::Ceil, FloatTypes>);
OPERATOR_SCHEMA(Ceil)
    .NumInputs(1)
    .NumOutputs(1)
    .PointwiseCostInference(1)
    .AllowInplace({{0, 0}})
    .IdenticalTypeAndShape()
    .Input(0, "X", "input tensor")
    .Output(0, "Y", "X's shape and type")
    .SetDoc("Y = ceil(X), elementwise.");
REGISTER_GRADIENT(Ceil, NoGradient);

}  // namespace caffe2
