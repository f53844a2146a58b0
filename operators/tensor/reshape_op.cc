// Reshape: [X, new_shape?] -> [Y, old_shape] (spec ops §1.3). The new dims come from the `shape`
// argument (ints) or from the 1-D int input, never both. A 0 keeps the input's dim at that
// position; one -1 is inferred from the element count. old_shape is a 1-D int64 CPU tensor of X's
// dims. Allow in-place 0->0. Gradient: Reshape [dY, old_shape] -> [dX, "_" + dX + "_dims"], with no
// arguments copied.
#include "core/gradient.h"
#include "operators/tensor/tensor_util.h"

namespace caffe2 {
namespace {

// Resolves 0 and -1 entries of `shape` against `in` (element count `numel`).
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

class ReshapeOp final : public Operator<CPUContext> {
 public:
  ReshapeOp(const OperatorDef& def, Workspace* ws)
      : Operator<CPUContext>(def, ws), shape_(GetRepeatedArgument<int64_t>("shape")) {
    C2_ENFORCE(InputSize() == 1 || !HasArgument("shape"),
               "give the new shape either as the 'shape' argument or as input 1, not both");
    C2_ENFORCE(InputSize() == 2 || HasArgument("shape"),
               "the new shape is missing: give the 'shape' argument or a second input");
  }

  bool RunOnDevice() override {
    const Tensor& X = Input(0);
    const std::vector<int64_t> old_dims = X.dims();
    const std::vector<int64_t> shape = ResolveShape(
        old_dims, X.numel(), InputSize() == 2 ? IntValues(Input(1), "new_shape") : shape_);
    Tensor* old_shape = Output(1);
    old_shape->Resize(static_cast<int64_t>(old_dims.size()));
    int64_t* o = old_shape->mutable_data<int64_t>();
    for (size_t i = 0; i < old_dims.size(); ++i) o[i] = old_dims[i];
    Tensor* Y = Output(0);
    if (!IsInputOutputAlias(0, 0)) Y->CopyFrom(X);
    Y->Reshape(shape);
    return true;
  }

 private:
  std::vector<int64_t> shape_;
};

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

REGISTER_CPU_OPERATOR(Reshape, ReshapeOp);
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
