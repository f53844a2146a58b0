// ConstantFill: Y filled with `value` of type `dtype`.
// Without `dtype`, an integer `value` gives INT64, a string value STRING, otherwise FLOAT.
// Supported: FLOAT, DOUBLE, BOOL, INT8, INT16, INT32, INT64, UINT8, UINT16, STRING.
#include "operators/fill/constant_fill_op.h"

#include "core/gradient.h"
#include "operators/fill/filler_op.h"

namespace caffe2 {

REGISTER_CPU_OPERATOR(ConstantFill, ConstantFillOp);
OPERATOR_SCHEMA(ConstantFill)
    .NumInputs(0, 1)
    .NumOutputs(1)
    .AllowInplace({{0, 0}})
    .TensorInference(FillerTensorInference)
    .Arg("value", "The fill value (float, int or string)")
    .Arg("dtype", "Output element type (TensorProto.DataType)")
    .SetDoc("Fills the output with a constant value.")
    .Output(0, "output", "The filled tensor");
static OpSchema& c2_constant_fill_args [[maybe_unused]] = AddFillerArgs(c2_op_schema_ConstantFill);
REGISTER_GRADIENT(ConstantFill, NoGradient);

}  // namespace caffe2
