// Reshape: schema, gradient, shape inference and the CPU registration (contract in reshape_op.h).
#include "operators/shape/reshape_op.h"

#include "core/gradient.h"

namespace caffe2 {

std::vector<int64_t> ResolveShape(const std::vector<int64_t>& in, int64_t numel,
                                  std::vector<int64_t> shape) {
  int unknown = -1;
  int64_t known = 1;
  for (size_t i = 0; i < shape.size(); ++i) {
    if (shape[i] == 0) {
      C2_ENFORCE(i < in.size(), "shape entry ", i, " is 0 (copy the input's dim) but the input ",
                 Tensor::DimsString(in), " has only ", in.size(), " dims");
      shape[i] = in[i];
    }
    if (shape[i] == -1) {
      C2_ENFORCE(unknown < 0, "shape ", Tensor::DimsString(shape), " has more than one -1");
      unknown = static_cast<int>(i);
      continue;
    }
    C2_ENFORCE(shape[i] >= 0, "shape ", Tensor::DimsString(shape), " has a negative size");
    known *= shape[i];
  }
  if (unknown >= 0) {
    C2_ENFORCE(known > 0 && numel % known == 0, "cannot reshape ", Tensor::DimsString(in), " (",
               numel, " elements) into ", Tensor::DimsString(shape));
    shape[unknown] = numel / known;
  } else {
    C2_ENFORCE(known == numel, "cannot reshape ", Tensor::DimsString(in), " (", numel,
               " elements) into ", Tensor::DimsString(shape), " (", known, " elements)");
  }
  return shape;
}

namespace {

std::vector<TensorShape> ReshapeInference(const OperatorDef& def,
                                          const std::vector<TensorShape>& in) {
  TensorShape out = in[0];
  TensorShape old_shape;
  old_shape.set_data_type(TensorProto::INT64);
  old_shape.add_dims(in[0].dims_size());
  ArgumentHelper args(def);
  if (in.size() == 2 || !args.HasArgument("shape") || in[0].unknown_shape()) {
    out.set_unknown_shape(true);
    out.clear_dims();
    return {out, old_shape};
  }
  std::vector<int64_t> dims(in[0].dims().begin(), in[0].dims().end());
  int64_t numel = 1;
  for (int64_t d : dims) numel *= d;
  try {
    const std::vector<int64_t> shape =
        ResolveShape(dims, numel, args.GetRepeatedArgument<int64_t>("shape"));
    out.clear_dims();
    for (int64_t d : shape) out.add_dims(d);
  } catch (const EnforceNotMet&) {
    out.set_unknown_shape(true);
    out.clear_dims();
  }
  return {out, old_shape};
}

class GetReshapeGradient final : public GradientMakerBase {
  using GradientMakerBase::GradientMakerBase;
  bool CopyArguments() const override { return false; }
  std::vector<OperatorDef> GetGradientDefs() override {
    return SingleGradientDef("Reshape", "", {GO(0), O(1)}, {GI(0), "_" + GI(0) + "_dims"});
  }
};

}  // namespace

REGISTER_CPU_OPERATOR(Reshape, ReshapeOp<CPUContext>);
OPERATOR_SCHEMA(Reshape)
    .NumInputs(1, 2)
    .NumOutputs(2)
    .AllowInplace({{0, 0}})
    .TensorInference(ReshapeInference)
    .Arg("shape", "New dims: 0 keeps the input's dim, one -1 is inferred")
    .Output(0, "reshaped", "X with the new dims")
    .Output(1, "old_shape", "X's dims (int64)")
    .SetDoc("Gives a tensor new dims with the same elements.");
REGISTER_GRADIENT(Reshape, GetReshapeGradient);

}  // namespace caffe2
