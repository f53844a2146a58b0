// Comparisons LT, LE, GT, GE, EQ: [A, B] -> [C bool], with the legacy broadcast of B (spec ops
// §1.2.10); int32, int64, float, double, and bool. No gradient.
#include "core/gradient.h"
#include "operators/common/elementwise_op_base.h"

namespace caffe2 {

REGISTER_CPU_OPERATOR(LT, BinaryOp<functors::LT, NumericAndBoolTypes, true>);
REGISTER_CPU_OPERATOR(LE, BinaryOp<functors::LE, NumericAndBoolTypes, true>);
REGISTER_CPU_OPERATOR(GT, BinaryOp<functors::GT, NumericAndBoolTypes, true>);
REGISTER_CPU_OPERATOR(GE, BinaryOp<functors::GE, NumericAndBoolTypes, true>);
REGISTER_CPU_OPERATOR(EQ, BinaryOp<functors::EQ, NumericAndBoolTypes, true>);

OPERATOR_SCHEMA(LT)
    .NumInputs(2)
    .NumOutputs(1)
    .TensorInference(BinaryOutputInference(true))
    .SetDoc("C = A < B elementwise (bool); B broadcasts over A with broadcast=1.");
OPERATOR_SCHEMA(LE)
    .NumInputs(2)
    .NumOutputs(1)
    .TensorInference(BinaryOutputInference(true))
    .SetDoc("C = A <= B elementwise (bool); B broadcasts over A with broadcast=1.");
OPERATOR_SCHEMA(GT)
    .NumInputs(2)
    .NumOutputs(1)
    .TensorInference(BinaryOutputInference(true))
    .SetDoc("C = A > B elementwise (bool); B broadcasts over A with broadcast=1.");
OPERATOR_SCHEMA(GE)
    .NumInputs(2)
    .NumOutputs(1)
    .TensorInference(BinaryOutputInference(true))
    .SetDoc("C = A >= B elementwise (bool); B broadcasts over A with broadcast=1.");
OPERATOR_SCHEMA(EQ)
    .NumInputs(2)
    .NumOutputs(1)
    .TensorInference(BinaryOutputInference(true))
    .SetDoc("C = A == B elementwise (bool); B broadcasts over A with broadcast=1.");

REGISTER_GRADIENT(LT, ShouldNotDoGradient);
REGISTER_GRADIENT(LE, ShouldNotDoGradient);
REGISTER_GRADIENT(GT, ShouldNotDoGradient);
REGISTER_GRADIENT(GE, ShouldNotDoGradient);
REGISTER_GRADIENT(EQ, ShouldNotDoGradient);

}  // namespace caffe2
