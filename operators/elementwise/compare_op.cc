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
// The legacy broadcast arguments of every comparison (operators/common/broadcast.h).
static OpSchema& c2_lt_args [[maybe_unused]] = AddBroadcastArgs(c2_op_schema_LT);
static OpSchema& c2_le_args [[maybe_unused]] = AddBroadcastArgs(c2_op_schema_LE);
static OpSchema& c2_gt_args [[maybe_unused]] = AddBroadcastArgs(c2_op_schema_GT);
static OpSchema& c2_ge_args [[maybe_unused]] = AddBroadcastArgs(c2_op_schema_GE);
static OpSchema& c2_eq_args [[maybe_unused]] = AddBroadcastArgs(c2_op_schema_EQ);

REGISTER_GRADIENT(LT, ShouldNotDoGradient);
REGISTER_GRADIENT(LE, ShouldNotDoGradient);
REGISTER_GRADIENT(GT, ShouldNotDoGradient);
REGISTER_GRADIENT(GE, ShouldNotDoGradient);
REGISTER_GRADIENT(EQ, ShouldNotDoGradient);

}  // namespace caffe2
