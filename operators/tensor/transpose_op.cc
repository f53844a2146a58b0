// Transpose: [X] -> [Y], Y.dims[i] = X.dims[axes[i]] (spec ops §1.3). `axes` (ints) is a
// permutation of 0..ndim-1, reversed dims by default. Any element type.
// Gradient: Transpose(dY) with the inverse permutation.
#include <numeric>

#include "core/gradient.h"
#include "operators/tensor/tensor_util.h"

namespace caffe2 {
namespace {

std::vector<int> Permutation(const std::vector<int>& axes, int ndim) {
  std::vector<int> perm(ndim);
  if (axes.empty()) {
    for (int i = 0; i < ndim; ++i) perm[i] = ndim - 1 - i;
    return perm;
  }
  C2_ENFORCE(static_cast<int>(axes.size()) == ndim, "axes has ", axes.size(), " entries but X has ",
             ndim, " dims");
  std::vector<bool> seen(ndim, false);
  for (int i = 0; i < ndim; ++i) {
    const int a = axes[i] < 0 ? axes[i] + ndim : axes[i];
    C2_ENFORCE(a >= 0 && a < ndim && !seen[a], "axes is not a permutation of 0..", ndim - 1);
    seen[a] = true;
    perm[i] = a;
  }
  return perm;
}

class TransposeOp final : public Operator<CPUContext> {
 public:
  TransposeOp(const OperatorDef& def, Workspace* ws)
      : Operator<CPUContext>(def, ws), axes_(GetRepeatedArgument<int>("axes")) {}

  bool RunOnDevice() override {
    const Tensor& X = Input(0);
    const int ndim = X.ndim();
    const std::vector<int> perm = Permutation(axes_, ndim);
    std::vector<int64_t> dims(ndim);
    for (int i = 0; i < ndim; ++i) dims[i] = X.dim(perm[i]);
    Tensor* Y = Output(0);
    Y->Resize(dims);
    const TypeMeta& meta = X.meta();
    char* y = static_cast<char*>(Y->raw_mutable_data(meta));
    const char* x = static_cast<const char*>(X.raw_data());
    const int64_t n = X.numel();
    if (n == 0) return true;
    // Strides of X seen in Y's order; walk Y linearly with a mixed-radix counter.
    std::vector<int64_t> xstride(ndim, 1);
    for (int i = ndim - 2; i >= 0; --i) xstride[i] = xstride[i + 1] * X.dim(i + 1);
    std::vector<int64_t> stride(ndim), idx(ndim, 0);
    for (int i = 0; i < ndim; ++i) stride[i] = xstride[perm[i]];
    const size_t item = meta.itemsize;
    int64_t src = 0;
    for (int64_t k = 0; k < n; ++k) {
      CopyItems(meta, 1, x + src * item, y + k * item);
      for (int d = ndim - 1; d >= 0; --d) {
        src += stride[d];
        if (++idx[d] < dims[d]) break;
        src -= stride[d] * dims[d];
        idx[d] = 0;
      }
    }
    return true;
  }

 private:
  std::vector<int> axes_;
};

std::vector<TensorShape> TransposeInference(const OperatorDef& def,
                                            const std::vector<TensorShape>& in) {
  ArgumentHelper args(def);
  TensorShape out = in[0];
  const int ndim = in[0].dims_size();
  std::vector<int> axes = args.GetRepeatedArgument<int>("axes");
  try {
    const std::vector<int> perm = Permutation(axes, ndim);
    for (int i = 0; i < ndim; ++i) out.set_dims(i, in[0].dims(perm[i]));
  } catch (const EnforceNotMet&) {
    out.set_unknown_shape(true);
  }
  return {out};
}

class GetTransposeGradient final : public GradientMakerBase {
  using GradientMakerBase::GradientMakerBase;
  bool CopyArguments() const override { return false; }
  std::vector<OperatorDef> GetGradientDefs() override {
    ArgumentHelper args(Def());
    std::vector<int64_t> axes = args.GetRepeatedArgument<int64_t>("axes");
    std::vector<Argument> grad_args;
    if (!axes.empty()) {
      std::vector<int64_t> inverse(axes.size());
      for (size_t i = 0; i < axes.size(); ++i) {
        const int64_t a = axes[i] < 0 ? axes[i] + static_cast<int64_t>(axes.size()) : axes[i];
        inverse.at(a) = static_cast<int64_t>(i);
      }
      grad_args.push_back(MakeArgument("axes", inverse));
    }
    return SingleGradientDef("Transpose", "", {GO(0)}, {GI(0)}, grad_args);
  }
};

}  // namespace

REGISTER_CPU_OPERATOR(Transpose, TransposeOp);
OPERATOR_SCHEMA(Transpose)
    .NumInputs(1)
    .NumOutputs(1)
    .TensorInference(TransposeInference)
    .Arg("axes", "Permutation of the dims (default: reversed)")
    .SetDoc("Permutes the dims of a tensor.");
REGISTER_GRADIENT(Transpose, GetTransposeGradient);

}  // namespace caffe2
