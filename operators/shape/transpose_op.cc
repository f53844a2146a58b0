#include "operators/shape/transpose_op.h"

#include "core/gradient.h"
#include "operators/tensor/tensor_util.h"

namespace caffe2 {
namespace {

// Walks y linearly with a mixed-radix counter over y's dims, reading x through permuted strides;
// `row` consecutive elements are moved at once (1 unless the last dim stays in place).
template <class Copy>
void PermuteWalk(const std::vector<int64_t>& ydims, const std::vector<int64_t>& stride, int64_t row,
                 Copy copy) {
  const int nd = static_cast<int>(ydims.size());
  int64_t n = 1;
  for (int64_t d : ydims) n *= d;
  std::vector<int64_t> idx(nd, 0);
  int64_t src = 0;
  for (int64_t k = 0; k < n; k += row) {
    copy(src, k);
    for (int d = nd - (row > 1 ? 2 : 1); d >= 0; --d) {
      src += stride[d];
      if (++idx[d] < ydims[d]) break;
      src -= stride[d] * ydims[d];
      idx[d] = 0;
    }
  }
}

template <class T>
void PermuteTyped(const std::vector<int64_t>& ydims, const std::vector<int64_t>& stride,
                  const void* x, void* y) {
  const T* xs = static_cast<const T*>(x);
  T* ys = static_cast<T*>(y);
  PermuteWalk(ydims, stride, 1, [&](int64_t src, int64_t dst) { ys[dst] = xs[src]; });
}

}  // namespace

std::vector<int> TransposePermutation(const std::vector<int>& axes, int ndim) {
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

void TransposeData(const TypeMeta& meta, const std::vector<int64_t>& xdims,
                   const std::vector<int>& perm, const void* x, void* y) {
  const int nd = static_cast<int>(xdims.size());
  int64_t n = 1;
  for (int64_t d : xdims) n *= d;
  if (n == 0) return;
  if (nd == 0) return CopyItems(meta, 1, x, y);
  std::vector<int64_t> xstride(nd, 1), stride(nd), ydims(nd);
  for (int i = nd - 2; i >= 0; --i) xstride[i] = xstride[i + 1] * xdims[i + 1];
  for (int i = 0; i < nd; ++i) {
    stride[i] = xstride[perm[i]];
    ydims[i] = xdims[perm[i]];
  }
  const size_t item = meta.itemsize;
  if (perm[nd - 1] == nd - 1 || meta.copy) {
    // Whole rows when the last dim stays last; element by element for non-trivial types.
    const int64_t row = perm[nd - 1] == nd - 1 ? xdims[nd - 1] : 1;
    const char* xs = static_cast<const char*>(x);
    char* ys = static_cast<char*>(y);
    PermuteWalk(ydims, stride, row, [&](int64_t src, int64_t dst) {
      CopyItems(meta, row, xs + src * item, ys + dst * item);
    });
    return;
  }
  switch (item) {
    case 1:
      return PermuteTyped<uint8_t>(ydims, stride, x, y);
    case 2:
      return PermuteTyped<uint16_t>(ydims, stride, x, y);
    case 4:
      return PermuteTyped<uint32_t>(ydims, stride, x, y);
    case 8:
      return PermuteTyped<uint64_t>(ydims, stride, x, y);
    default:
      C2_THROW("cannot transpose elements of ", item, " bytes");
  }
}

namespace {

class TransposeOp final : public Operator<CPUContext> {
 public:
  TransposeOp(const OperatorDef& def, Workspace* ws)
      : Operator<CPUContext>(def, ws), axes_(GetRepeatedArgument<int>("axes")) {}

  bool RunOnDevice() override {
    const Tensor& X = Input(0);
    const int ndim = X.ndim();
    const std::vector<int> perm = TransposePermutation(axes_, ndim);
    std::vector<int64_t> dims(ndim);
    for (int i = 0; i < ndim; ++i) dims[i] = X.dim(perm[i]);
    Tensor* Y = Output(0);
    Y->Resize(dims);
    TransposeData(X.meta(), X.dims(), perm, X.raw_data(), Y->raw_mutable_data(X.meta()));
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
    const std::vector<int> perm = TransposePermutation(axes, ndim);
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
