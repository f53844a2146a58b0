// Flatten:      [X] -> [Y], Y is 2-D (prod(X.dims[:axis]), prod(X.dims[axis:])); `axis` (1).
// FlattenToVec: [X] -> [Y], Y is 1-D (X.numel()).
// ResizeLike:   [X, like] -> [Y], X's data with like's dims (element counts must agree).
// Gradients (spec ops §1.2.11, §1.2.13): Flatten and FlattenToVec -> ResizeLike [dY, X] -> [dX];
// ResizeLike: SHOULD_NOT_DO_GRADIENT.
#include "core/gradient.h"
#include "operators/tensor/tensor_util.h"

namespace caffe2 {
namespace {

void CopyWithDims(const Tensor& X, const std::vector<int64_t>& dims, Tensor* Y, bool aliased) {
  if (!aliased) Y->CopyFrom(X);
  Y->Reshape(dims);
}

class FlattenOp final : public Operator<CPUContext> {
 public:
  FlattenOp(const OperatorDef& def, Workspace* ws)
      : Operator<CPUContext>(def, ws), axis_(GetSingleArgument<int>("axis", 1)) {}
  bool RunOnDevice() override {
    const Tensor& X = Input(0);
    C2_ENFORCE(axis_ >= 0 && axis_ <= X.ndim(), "axis ", axis_, " out of range for X ",
               Tensor::DimsString(X.dims()));
    CopyWithDims(X, {X.size_to_dim(axis_), X.size_from_dim(axis_)}, Output(0),
                 IsInputOutputAlias(0, 0));
    return true;
  }

 private:
  int axis_;
};

class FlattenToVecOp final : public Operator<CPUContext> {
 public:
  using Operator<CPUContext>::Operator;
  bool RunOnDevice() override {
    const Tensor& X = Input(0);
    CopyWithDims(X, {X.numel()}, Output(0), IsInputOutputAlias(0, 0));
    return true;
  }
};

class ResizeLikeOp final : public Operator<CPUContext> {
 public:
  using Operator<CPUContext>::Operator;
  bool RunOnDevice() override {
    const Tensor& X = Input(0);
    const Tensor& like = Input(1);
    C2_ENFORCE(X.numel() == like.numel(), "X ", Tensor::DimsString(X.dims()), " has ", X.numel(),
               " elements but the shape source ", Tensor::DimsString(like.dims()), " has ",
               like.numel());
    CopyWithDims(X, like.dims(), Output(0), IsInputOutputAlias(0, 0));
    return true;
  }
};

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

REGISTER_CPU_OPERATOR(Flatten, FlattenOp);
OPERATOR_SCHEMA(Flatten)
    .NumInputs(1)
    .NumOutputs(1)
    .TensorInference(FlattenInference)
    .Arg("axis", "Dims before axis form the rows (1)")
    .SetDoc("Views a tensor as a 2-D matrix split at axis.");
REGISTER_GRADIENT(Flatten, GetFlattenGradient);

REGISTER_CPU_OPERATOR(FlattenToVec, FlattenToVecOp);
OPERATOR_SCHEMA(FlattenToVec)
    .NumInputs(1)
    .NumOutputs(1)
    .TensorInference(FlattenInference)
    .SetDoc("Views a tensor as a vector.");
REGISTER_GRADIENT(FlattenToVec, GetFlattenGradient);

REGISTER_CPU_OPERATOR(ResizeLike, ResizeLikeOp);
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
