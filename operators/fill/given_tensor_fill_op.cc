// GivenTensorFill and its typed variants: Y filled element by element from `values`, whose length
// must equal Y's element count.
//   GivenTensorFill        values: floats; optional dtype FLOAT (default), DOUBLE, BOOL, INT32,
//   INT64 GivenTensorDoubleFill  values: floats, stored as double GivenTensorBoolFill    values:
//   ints, stored as bool GivenTensorIntFill     values: ints, stored as int32 GivenTensorInt64Fill
//   values: ints, stored as int64 GivenTensorStringFill  values: strings
#include "operators/fill/given_tensor_fill_op.h"

#include <string>
#include <vector>

#include "core/gradient.h"
#include "operators/fill/filler_op.h"

namespace caffe2 {
namespace {
std::vector<TensorShape> TypedInference(DataType type, const OperatorDef& def,
                                        const std::vector<TensorShape>& inputs) {
  auto shapes = FillerTensorInference(def, inputs);
  if (!ArgumentHelper(def).HasArgument("dtype")) {
    for (auto& s : shapes) s.set_data_type(static_cast<TensorProto::DataType>(type));
  }
  return shapes;
}

}  // namespace

#define C2_GIVEN_FILL(Name, TYPE)                                                          \
  REGISTER_CPU_OPERATOR(Name, GivenTensorFillOp<DataType::TYPE>);                          \
  OPERATOR_SCHEMA(Name)                                                                    \
      .NumInputs(0, 1)                                                                     \
      .NumOutputs(1)                                                                       \
      .AllowInplace({{0, 0}})                                                              \
      .TensorInference([](const OperatorDef& def, const std::vector<TensorShape>& in) {    \
        return TypedInference(DataType::TYPE, def, in);                                    \
      })                                                                                   \
      .Arg("values", "The elements, in row-major order", true)                             \
      .Arg("dtype",                                                                        \
           "(int, default the op's own type: FLOAT for GivenTensorFill) the output's "     \
           "TensorProto.DataType; values are converted to it")                             \
      .SetDoc("Fills the output with the given values.");                                  \
  static OpSchema& c2_##Name##_args [[maybe_unused]] = AddFillerArgs(c2_op_schema_##Name); \
  REGISTER_GRADIENT(Name, NoGradient)

C2_GIVEN_FILL(GivenTensorFill, FLOAT);
C2_GIVEN_FILL(GivenTensorDoubleFill, DOUBLE);
C2_GIVEN_FILL(GivenTensorBoolFill, BOOL);
C2_GIVEN_FILL(GivenTensorIntFill, INT32);
C2_GIVEN_FILL(GivenTensorInt64Fill, INT64);
C2_GIVEN_FILL(GivenTensorStringFill, STRING);
#undef C2_GIVEN_FILL

}  // namespace caffe2
