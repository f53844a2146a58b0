// Logical And, Or, Xor: [A bool, B bool] -> [C bool] with the legacy broadcast of B (spec ops
// §1.2.10); Not: [X bool] -> [Y bool], in place allowed. No gradients.
#include "core/gradient.h"
#include "operators/common/elementwise_op_base.h"

namespace caffe2 {

REGISTER_CPU_OPERATOR(And, BinaryOp<functors::And, BoolTypes, true>);
REGISTER_CPU_OPERATOR(Or, BinaryOp<functors::Or, BoolTypes, true>);
REGISTER_CPU_OPERATOR(Xor, BinaryOp<functors::Xor, BoolTypes, true>);
REGISTER_CPU_OPERATOR(Not, UnaryOp<functors::Not, BoolTypes>);

OPERATOR_SCHEMA(And)
    .NumInputs(2)
    .NumOutputs(1)
    .AllowInplace({{0, 0}})
    .TensorInference(BinaryOutputInference(true))
    .SetDoc("C = A and B (bool); B broadcasts over A with broadcast=1.");
OPERATOR_SCHEMA(Or)
    .NumInputs(2)
    .NumOutputs(1)
    .AllowInplace({{0, 0}})
    .TensorInference(BinaryOutputInference(true))
    .SetDoc("C = A or B (bool); B broadcasts over A with broadcast=1.");
OPERATOR_SCHEMA(Xor)
    .NumInputs(2)
    .NumOutputs(1)
    .AllowInplace({{0, 0}})
    .TensorInference(BinaryOutputInference(true))
    .SetDoc("C = A xor B (bool); B broadcasts over A with broadcast=1.");
OPERATOR_SCHEMA(Not)
    .NumInputs(1)
    .NumOutputs(1)
    .AllowInplace({{0, 0}})
    .IdenticalTypeAndShape()
    .SetDoc("Y = not X (bool).");
// The legacy broadcast arguments of the binary ops (operators/common/broadcast.h).
static OpSchema& c2_and_args [[maybe_unused]] = AddBroadcastArgs(c2_op_schema_And);
static OpSchema& c2_or_args [[maybe_unused]] = AddBroadcastArgs(c2_op_schema_Or);
static OpSchema& c2_xor_args [[maybe_unused]] = AddBroadcastArgs(c2_op_schema_Xor);

REGISTER_GRADIENT(And, ShouldNotDoGradient);
REGISTER_GRADIENT(Or, ShouldNotDoGradient);
REGISTER_GRADIENT(Xor, ShouldNotDoGradient);
REGISTER_GRADIENT(Not, ShouldNotDoGradient);

}  // namespace caffe2
