// Flatten, FlattenToVec, ResizeLike: schemas, gradients and the CPU registrations (contracts in
// flatten_op.h).
#include "operators/shape/flatten_op.h"

#include "core/gradient.h"

namespace caffe2 {
namespace {

std::vector<TensorShape> FlattenInference(const OperatorDef& def,
                                          const std::vector<TensorShape>& in) {
  TensorShape out = in[0];
  out.clear_dims();
  const int axis =
      def.type() == "FlattenToVec" ? 0 : ArgumentHelper(def).GetSingleArgument<int>("axis", 1);
  int64_t outer = 1, inner = 1;
  for (int i = 0; i < in[0].dims_size(); ++i) (i < axis ? outer : inner) *= in[0].dims(i);
  if (def.type() == "Flatten") out.add_dims(outer);
  out.add_dims(inner);
  return {out};
}

class GetFlattenGradient final : public GradientMakerBase {
  using GradientMakerBase::GradientMakerBase;
  std::vector<OperatorDef> GetGradientDefs() override {
    return SingleGradientDef("ResizeLike", "", {GO(0), I(0)}, {GI(0)});
  }
};

}  // namespace

REGISTER_CPU_OPERATOR(Flatten, FlattenOp<CPUContext>);
OPERATOR_SCHEMA(Flatten)
    .NumInputs(1)
    .NumOutputs(1)
    .TensorInference(FlattenInference)
    .Arg("axis", "Dims before axis form the rows (1)")
    .SetDoc("Views a tensor as a 2-D matrix split at axis.");
REGISTER_GRADIENT(Flatten, GetFlattenGradient);

REGISTER_CPU_OPERATOR(FlattenToVec, FlattenToVecOp<CPUContext>);
OPERATOR_SCHEMA(FlattenToVec)
    .NumInputs(1)
    .NumOutputs(1)
    .TensorInference(FlattenInference)
    .SetDoc("Views a tensor as a vector.");
REGISTER_GRADIENT(FlattenToVec, GetFlattenGradient);

REGISTER_CPU_OPERATOR(ResizeLike, ResizeLikeOp<CPUContext>);
OPERATOR_SCHEMA(ResizeLike)
    .NumInputs(2)
    .NumOutputs(1)
    .AllowInplace({{0, 0}})
    .TensorInference([](const OperatorDef&, const std::vector<TensorShape>& in) {
      TensorShape out = in[1];
      out.set_data_type(in[0].data_type());
      return std::vector<TensorShape>{out};
    })
    .SetDoc("X's data with the dims of the second input.");
REGISTER_GRADIENT(ResizeLike, ShouldNotDoGradient);

}  // namespace caffe2
