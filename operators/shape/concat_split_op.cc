#include "operators/shape/concat_split_op.h"

#include <algorithm>
#include <utility>

#include "core/gradient.h"
#include "operators/tensor/tensor_util.h"

namespace caffe2 {

namespace {
int AxisFromArgs(bool has_axis, int axis, bool has_order, const std::string& order) {
  C2_ENFORCE(!(has_axis && has_order), "give either 'axis' or 'order', not both");
  if (has_axis) return axis;
  if (!has_order || order == "NCHW") return 1;
  C2_ENFORCE(order == "NHWC", "unknown order '", order, "' (NCHW or NHWC)");
  return 3;
}
}  // namespace

int ConcatSplitAxis(const OperatorBase& op) {
  return AxisFromArgs(op.HasArgument("axis"), op.GetSingleArgument<int>("axis", 1),
                      op.HasArgument("order"), op.GetSingleArgument<std::string>("order", "NCHW"));
}

ConcatOp::ConcatOp(const OperatorDef& def, Workspace* ws)
    : Operator<CPUContext>(def, ws),
      axis_(ConcatSplitAxis(*this)),
      add_axis_(GetSingleArgument<int>("add_axis", 0) != 0) {}

ConcatLayout MakeConcatLayout(const std::vector<const Tensor*>& inputs, int axis_arg,
                              bool add_axis) {
  const Tensor& X0 = *inputs[0];
  const int out_ndim = X0.ndim() + (add_axis ? 1 : 0);
  ConcatLayout layout;
  const int axis = layout.axis = CanonicalAxis(axis_arg, out_ndim);
  std::vector<int64_t>& dims = layout.dims = X0.dims();
  if (add_axis) dims.insert(dims.begin() + axis, 1);
  int64_t total = 0;
  for (size_t i = 0; i < inputs.size(); ++i) {
    const Tensor& Xi = *inputs[i];
    C2_ENFORCE(Xi.meta() == X0.meta(), "input ", i, " is ", Xi.meta().name, " but input 0 is ",
               X0.meta().name);
    std::vector<int64_t> di = Xi.dims();
    if (add_axis) di.insert(di.begin() + std::min<int>(axis, static_cast<int>(di.size())), 1);
    bool match = di.size() == dims.size();
    for (size_t d = 0; match && d < dims.size(); ++d) {
      match = static_cast<int>(d) == axis || di[d] == dims[d];
    }
    C2_ENFORCE(match, "input ", i, " ", Tensor::DimsString(Xi.dims()), " does not match input 0 ",
               Tensor::DimsString(X0.dims()), add_axis ? "" : " outside axis ",
               add_axis ? "" : std::to_string(axis));
    layout.sizes.push_back(static_cast<int32_t>(di[axis]));
    total += di[axis];
  }
  dims[axis] = total;
  layout.outer = Prod(dims, 0, axis);
  layout.inner = Prod(dims, axis + 1, dims.size());
  return layout;
}

void WriteSplitInfo(const ConcatLayout& layout, Tensor* split_info) {
  split_info->Resize(static_cast<int64_t>(layout.sizes.size()));
  int32_t* sizes = split_info->mutable_data<int32_t>();
  for (size_t i = 0; i < layout.sizes.size(); ++i) sizes[i] = layout.sizes[i];
}

bool ConcatOp::RunOnDevice() {
  std::vector<const Tensor*> inputs;
  for (int i = 0; i < InputSize(); ++i) inputs.push_back(&Input(i));
  const ConcatLayout layout = MakeConcatLayout(inputs, axis_, add_axis_);
  WriteSplitInfo(layout, Output(1));
  Tensor* Y = Output(0);
  Y->Resize(layout.dims);
  const int64_t outer = layout.outer, inner = layout.inner, total = layout.dims[layout.axis];
  const TypeMeta& meta = inputs[0]->meta();
  char* y = static_cast<char*>(Y->raw_mutable_data(meta));
  int64_t offset = 0;
  for (int i = 0; i < InputSize(); ++i) {
    const int64_t chunk = layout.sizes[i] * inner;
    const char* x = static_cast<const char*>(Input(i).raw_data());
    for (int64_t o = 0; o < outer; ++o) {
      CopyItems(meta, chunk, x + o * chunk * meta.itemsize,
                y + (o * total * inner + offset) * meta.itemsize);
    }
    offset += chunk;
  }
  return true;
}

SplitOp::SplitOp(const OperatorDef& def, Workspace* ws)
    : Operator<CPUContext>(def, ws),
      axis_(ConcatSplitAxis(*this)),
      add_axis_(GetSingleArgument<int>("add_axis", 0) != 0),
      split_(GetRepeatedArgument<int64_t>("split")) {}

SplitLayout MakeSplitLayout(const Tensor& X, int axis_arg, bool add_axis,
                            std::vector<int64_t> sizes, int n) {
  SplitLayout layout;
  const int axis = layout.axis = CanonicalAxis(axis_arg, X.ndim());
  const int64_t extent = layout.extent = X.dim(axis);
  if (sizes.empty()) {
    C2_ENFORCE(extent % n == 0, "cannot split dimension ", axis, " of size ", extent, " into ", n,
               " equal parts");
    sizes.assign(n, extent / n);
  }
  C2_ENFORCE(static_cast<int>(sizes.size()) == n, "split has ", sizes.size(),
             " sizes but the op has ", n, " outputs");
  int64_t sum = 0;
  for (int64_t s : sizes) {
    C2_ENFORCE(s >= 0, "split sizes must be non-negative, got ", s);
    C2_ENFORCE(!add_axis || s == 1, "with add_axis=1 every split size must be 1, got ", s);
    sum += s;
  }
  C2_ENFORCE(sum == extent, "split sizes add up to ", sum, " but dimension ", axis, " of X ",
             Tensor::DimsString(X.dims()), " is ", extent);
  layout.outer = X.size_to_dim(axis);
  layout.inner = X.size_from_dim(axis + 1);
  for (int i = 0; i < n; ++i) {
    std::vector<int64_t> dims = X.dims();
    if (add_axis) {
      dims.erase(dims.begin() + axis);
    } else {
      dims[axis] = sizes[i];
    }
    layout.dims.push_back(dims);
  }
  layout.sizes = std::move(sizes);
  return layout;
}

bool SplitOp::RunOnDevice() {
  const Tensor& X = Input(0);
  const SplitLayout layout = MakeSplitLayout(
      X, axis_, add_axis_,
      InputSize() == 2 ? IntValues(OnHost(Input(1), &host_split_), "split") : split_, OutputSize());
  const int64_t outer = layout.outer, inner = layout.inner, extent = layout.extent;
  const TypeMeta& meta = X.meta();
  const char* x = static_cast<const char*>(X.raw_data());
  int64_t offset = 0;
  for (int i = 0; i < OutputSize(); ++i) {
    Tensor* Y = Output(i);
    Y->Resize(layout.dims[i]);
    char* y = static_cast<char*>(Y->raw_mutable_data(meta));
    const int64_t chunk = layout.sizes[i] * inner;
    for (int64_t o = 0; o < outer; ++o) {
      CopyItems(meta, chunk, x + (o * extent * inner + offset) * meta.itemsize,
                y + o * chunk * meta.itemsize);
    }
    offset += chunk;
  }
  return true;
}

namespace {

std::vector<TensorShape> ConcatInference(const OperatorDef& def,
                                         const std::vector<TensorShape>& in) {
  ArgumentHelper args(def);
  const bool add_axis = args.GetSingleArgument<int>("add_axis", 0) != 0;
  const int axis_arg =
      AxisFromArgs(args.HasArgument("axis"), args.GetSingleArgument<int>("axis", 1),
                   args.HasArgument("order"), args.GetSingleArgument<std::string>("order", "NCHW"));
  TensorShape out = in[0];
  TensorShape info;
  info.set_data_type(TensorProto::INT32);
  info.add_dims(static_cast<int64_t>(in.size()));
  const int ndim = in[0].dims_size() + (add_axis ? 1 : 0);
  if (axis_arg < -ndim || axis_arg >= ndim) {
    out.set_unknown_shape(true);
    return {out, info};
  }
  const int axis = axis_arg < 0 ? axis_arg + ndim : axis_arg;
  std::vector<int64_t> dims(in[0].dims().begin(), in[0].dims().end());
  if (add_axis) {
    dims.insert(dims.begin() + axis, static_cast<int64_t>(in.size()));
  } else {
    int64_t total = 0;
    for (const auto& s : in) {
      if (s.dims_size() != ndim) {
        out.set_unknown_shape(true);
        return {out, info};
      }
      total += s.dims(axis);
    }
    dims[axis] = total;
  }
  out.clear_dims();
  for (int64_t d : dims) out.add_dims(d);
  return {out, info};
}

// Split: known shapes when the sizes come from the argument (or are equal pieces); with the sizes
// as input 1 (a runtime value) the outputs keep X's type with unknown shapes.
std::vector<TensorShape> SplitInference(const OperatorDef& def,
                                        const std::vector<TensorShape>& in) {
  ArgumentHelper args(def);
  const int n = def.output_size();
  TensorShape unknown = in[0];
  unknown.clear_dims();
  unknown.set_unknown_shape(true);
  std::vector<TensorShape> out(n, unknown);
  const int ndim = in[0].dims_size();
  const int axis_arg =
      AxisFromArgs(args.HasArgument("axis"), args.GetSingleArgument<int>("axis", 1),
                   args.HasArgument("order"), args.GetSingleArgument<std::string>("order", "NCHW"));
  if (in.size() == 2 || in[0].unknown_shape() || axis_arg < -ndim || axis_arg >= ndim) return out;
  const int axis = axis_arg < 0 ? axis_arg + ndim : axis_arg;
  std::vector<int64_t> sizes = args.GetRepeatedArgument<int64_t>("split");
  if (sizes.empty()) {
    if (in[0].dims(axis) % n != 0) return out;
    sizes.assign(n, in[0].dims(axis) / n);
  }
  if (static_cast<int>(sizes.size()) != n) return out;
  const bool add_axis = args.GetSingleArgument<int>("add_axis", 0) != 0;
  for (int i = 0; i < n; ++i) {
    TensorShape& y = out[i];
    y.set_unknown_shape(false);
    for (int d = 0; d < ndim; ++d) {
      if (d == axis && add_axis) continue;
      y.add_dims(d == axis ? sizes[i] : in[0].dims(d));
    }
  }
  return out;
}

class GetConcatGradient final : public GradientMakerBase {
  using GradientMakerBase::GradientMakerBase;
  std::vector<OperatorDef> GetGradientDefs() override {
    std::vector<std::string> grads;
    for (int i = 0; i < Def().input_size(); ++i) grads.push_back(GI(i));
    return SingleGradientDef("Split", "", {GO(0), O(1)}, grads);
  }
};

class GetSplitGradient final : public GradientMakerBase {
  using GradientMakerBase::GradientMakerBase;
  std::vector<OperatorDef> GetGradientDefs() override {
    std::vector<OperatorDef> ops;
    std::vector<std::string> grads;
    bool any = false;
    for (int i = 0; i < Def().output_size(); ++i) any = any || !GradOut(i).IsEmpty();
    if (!any) return {};
    for (int i = 0; i < Def().output_size(); ++i) {
      if (!GradOut(i).IsEmpty()) {
        grads.push_back(GO(i));
        continue;
      }
      // The concat needs every piece; an output without a gradient contributes zeros.
      const std::string zero = O(i) + "_grad_autogen_zero";
      auto fill = SingleGradientDef("ConstantFill", "", {O(i)}, {zero},
                                    {MakeArgument<float>("value", 0.f)});
      ops.push_back(fill[0]);
      grads.push_back(zero);
    }
    auto concat = SingleGradientDef(Def().type() == "DepthSplit" ? "DepthConcat" : "Concat", "",
                                    grads, {GI(0), "_" + GI(0) + "_dims"});
    ops.push_back(concat[0]);
    return ops;
  }
};

}  // namespace

REGISTER_CPU_OPERATOR(Concat, ConcatOp);
REGISTER_CPU_OPERATOR(DepthConcat, ConcatOp);
REGISTER_CPU_OPERATOR(Split, SplitOp);
REGISTER_CPU_OPERATOR(DepthSplit, SplitOp);

OPERATOR_SCHEMA(Concat)
    .NumInputs(1, OpSchema::kInf)
    .NumOutputs(2)
    .TensorInference(ConcatInference)
    .Arg("axis", "Axis to join along (negative counts from the end)")
    .Arg("order", "NCHW (axis 1) or NHWC (axis 3), instead of axis")
    .Arg("add_axis", "Stack along a new axis")
    .Output(0, "concat_result", "The joined tensor")
    .Output(1, "split_info", "int32 extents of the inputs along the axis")
    .SetDoc("Joins tensors along an axis.");
OPERATOR_SCHEMA(DepthConcat)
    .NumInputs(1, OpSchema::kInf)
    .NumOutputs(2)
    .TensorInference(ConcatInference)
    .SetDoc("Concat under its old name.")
    .Arg("axis", "(int, default 1) axis to join along (negative counts from the end)")
    .Arg("order", "(string, default \"NCHW\") NCHW joins axis 1, NHWC axis 3; not with axis")
    .Arg("add_axis", "(int, default 0) 1: stack the inputs along a new axis");
OPERATOR_SCHEMA(Split)
    .NumInputs(1, 2)
    .NumOutputs(1, OpSchema::kInf)
    .TensorInference(SplitInference)
    .Arg("axis", "Axis to cut along")
    .Arg("order", "NCHW (axis 1) or NHWC (axis 3), instead of axis")
    .Arg("split", "Size of every piece (default: equal pieces)")
    .Arg("add_axis", "Pieces of size 1 lose the axis")
    .SetDoc("Cuts a tensor into pieces along an axis.");
OPERATOR_SCHEMA(DepthSplit)
    .NumInputs(1, 2)
    .NumOutputs(1, OpSchema::kInf)
    .TensorInference(SplitInference)
    .SetDoc("Split under its old name.")
    .Arg("axis", "(int, default 1) axis to cut along (negative counts from the end)")
    .Arg("order", "(string, default \"NCHW\") NCHW cuts axis 1, NHWC axis 3; not with axis")
    .Arg("split", "(list of int, default equal pieces) size of every piece; input 1 replaces it")
    .Arg("add_axis", "(int, default 0) 1: the pieces have size 1 along axis, which they lose");

REGISTER_GRADIENT(Concat, GetConcatGradient);
REGISTER_GRADIENT(DepthConcat, GetConcatGradient);
REGISTER_GRADIENT(Split, GetSplitGradient);
REGISTER_GRADIENT(DepthSplit, GetSplitGradient);

}  // namespace caffe2
