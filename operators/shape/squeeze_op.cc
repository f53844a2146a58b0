// Squeeze, ExpandDims: schemas, gradients and the CPU registrations (contracts in squeeze_op.h).
#include "operators/shape/squeeze_op.h"

#include <algorithm>

#include "core/gradient.h"

namespace caffe2 {

std::vector<int64_t> SortedDims(const OperatorBase& op) {
  C2_ENFORCE(op.HasArgument("dims"), "missing required argument 'dims'");
  std::vector<int64_t> dims = op.GetRepeatedArgument<int64_t>("dims");
  std::sort(dims.begin(), dims.end());
  dims.erase(std::unique(dims.begin(), dims.end()), dims.end());
  return dims;
}

std::vector<int64_t> SqueezeDims(const std::vector<int64_t>& in, const std::vector<int64_t>& dims) {
  std::vector<int64_t> out;
  size_t j = 0;
  for (size_t i = 0; i < in.size(); ++i) {
    if (j < dims.size() && dims[j] == static_cast<int64_t>(i)) {
      C2_ENFORCE(in[i] == 1, "dim ", i, " of X ", Tensor::DimsString(in), " has size ", in[i],
                 ", only size-1 dims can be squeezed");
      ++j;
      continue;
    }
    out.push_back(in[i]);
  }
  C2_ENFORCE(j == dims.size(), "dims ", Tensor::DimsString(dims), " out of range for X ",
             Tensor::DimsString(in));
  return out;
}

std::vector<int64_t> ExpandDims(std::vector<int64_t> in, const std::vector<int64_t>& dims) {
  for (int64_t d : dims) {
    C2_ENFORCE(d >= 0 && d <= static_cast<int64_t>(in.size()), "dims entry ", d,
               " out of range for a result of ", in.size() + 1, " dims");
    in.insert(in.begin() + d, 1);
  }
  return in;
}

namespace {

template <bool kSqueeze>
std::vector<TensorShape> SqueezeInference(const OperatorDef& def,
                                          const std::vector<TensorShape>& in) {
  ArgumentHelper args(def);
  std::vector<int64_t> dims = args.GetRepeatedArgument<int64_t>("dims");
  std::sort(dims.begin(), dims.end());
  dims.erase(std::unique(dims.begin(), dims.end()), dims.end());
  TensorShape out = in[0];
  try {
    std::vector<int64_t> x(in[0].dims().begin(), in[0].dims().end());
    std::vector<int64_t> y = kSqueeze ? SqueezeDims(x, dims) : ExpandDims(x, dims);
    out.clear_dims();
    for (int64_t d : y) out.add_dims(d);
  } catch (const EnforceNotMet&) {
    out.set_unknown_shape(true);
  }
  return {out};
}

template <bool kSqueeze>
class GetSqueezeGradient final : public GradientMakerBase {
  using GradientMakerBase::GradientMakerBase;
  std::vector<OperatorDef> GetGradientDefs() override {
    return SingleGradientDef(kSqueeze ? "ExpandDims" : "Squeeze", "", {GO(0)}, {GI(0)});
  }
};

}  // namespace

REGISTER_CPU_OPERATOR(Squeeze, SqueezeOp<CPUContext, true>);
OPERATOR_SCHEMA(Squeeze)
    .NumInputs(1)
    .NumOutputs(1)
    .AllowInplace({{0, 0}})
    .TensorInference(SqueezeInference<true>)
    .Arg("dims", "Size-1 dims to drop", true)
    .SetDoc("Removes size-1 dims.");
REGISTER_GRADIENT(Squeeze, GetSqueezeGradient<true>);

REGISTER_CPU_OPERATOR(ExpandDims, SqueezeOp<CPUContext, false>);
OPERATOR_SCHEMA(ExpandDims)
    .NumInputs(1)
    .NumOutputs(1)
    .AllowInplace({{0, 0}})
    .TensorInference(SqueezeInference<false>)
    .Arg("dims", "Positions of the new size-1 dims in the result", true)
    .SetDoc("Inserts size-1 dims.");
REGISTER_GRADIENT(ExpandDims, GetSqueezeGradient<false>);

}  // namespace caffe2
