// RowwiseMax: [X (B, M, N)] -> [Y (B, M)], Y[b, m] = max_n X[b, m, n].
// ColwiseMax: [X (B, M, N)] -> [Y (B, N)], Y[b, n] = max_m X[b, m, n].
// RowwiseMaxGradient / ColwiseMaxGradient: [X, Y, dY] -> [dX], dX = dY where X equals its max,
// else 0 (every tied maximum gets the whole dY, as upstream). float.
#include "core/gpu_fallback_declarations.h"
#include "core/gradient.h"
#include "core/operator.h"

namespace caffe2 {
namespace {

struct MaxShape {
  int64_t B, M, N;
};

MaxShape CheckMaxInput(const Tensor& X) {
  C2_ENFORCE(X.ndim() == 3, "X must be 3-d (batch, M, N), got ", X.DebugString());
  C2_ENFORCE(X.IsType<float>(), "unsupported type ", X.meta().name, " (supported: float)");
  return {X.dim(0), X.dim(1), X.dim(2)};
}

// The index in Y of X[b, m, n]: (b, m) for rows, (b, n) for columns.
template <bool kRows>
int64_t OutIndex(const MaxShape& s, int64_t b, int64_t m, int64_t n) {
  return kRows ? b * s.M + m : b * s.N + n;
}

template <bool kRows>
class MaxReductionOp final : public Operator<CPUContext> {
 public:
  using Operator<CPUContext>::Operator;
  bool RunOnDevice() override {
    const Tensor& X = Input(0);
    const MaxShape s = CheckMaxInput(X);
    Tensor* Y = Output(0);
    Y->Resize(s.B, kRows ? s.M : s.N);
    float* y = Y->mutable_data<float>();
    std::fill(y, y + Y->numel(), -std::numeric_limits<float>::infinity());
    const float* x = X.data<float>();
    for (int64_t b = 0; b < s.B; ++b)
      for (int64_t m = 0; m < s.M; ++m)
        for (int64_t n = 0; n < s.N; ++n) {
          float& out = y[OutIndex<kRows>(s, b, m, n)];
          out = std::max(out, x[(b * s.M + m) * s.N + n]);
        }
    return true;
  }
};

template <bool kRows>
class MaxReductionGradientOp final : public Operator<CPUContext> {
 public:
  using Operator<CPUContext>::Operator;
  bool RunOnDevice() override {
    const Tensor& X = Input(0);
    const Tensor& Y = Input(1);
    const Tensor& dY = Input(2);
    const MaxShape s = CheckMaxInput(X);
    const std::vector<int64_t> out_dims{s.B, kRows ? s.M : s.N};
    C2_ENFORCE(
        Y.dims() == out_dims && dY.dims() == out_dims && Y.IsType<float>() && dY.IsType<float>(),
        "Y and dY must be float ", Tensor::DimsString(out_dims), ", got ", Y.DebugString(), " and ",
        dY.DebugString());
    Tensor* dX = Output(0);
    dX->ResizeLike(X);
    const float* x = X.data<float>();
    const float* y = Y.data<float>();
    const float* dy = dY.data<float>();
    float* dx = dX->mutable_data<float>();
    for (int64_t b = 0; b < s.B; ++b)
      for (int64_t m = 0; m < s.M; ++m)
        for (int64_t n = 0; n < s.N; ++n) {
          const int64_t i = (b * s.M + m) * s.N + n;
          const int64_t o = OutIndex<kRows>(s, b, m, n);
          dx[i] = x[i] == y[o] ? dy[o] : 0.f;
        }
    return true;
  }
};

template <bool kRows>
class GetMaxReductionGradient final : public GradientMakerBase {
  using GradientMakerBase::GradientMakerBase;
  std::vector<OperatorDef> GetGradientDefs() override {
    return SingleGradientDef(kRows ? "RowwiseMaxGradient" : "ColwiseMaxGradient", "",
                             {I(0), O(0), GO(0)}, {GI(0)});
  }
};

std::vector<TensorShape> MaxReductionShape(const std::vector<TensorShape>& in, bool rows) {
  TensorShape y;
  y.set_data_type(TensorProto::FLOAT);
  if (in.at(0).dims_size() != 3) {
    y.set_unknown_shape(true);
  } else {
    y.add_dims(in[0].dims(0));
    y.add_dims(in[0].dims(rows ? 1 : 2));
  }
  return {y};
}

}  // namespace

REGISTER_CPU_OPERATOR(RowwiseMax, MaxReductionOp<true>);
REGISTER_GPU_FALLBACK(RowwiseMax);  // CUDA runs the CPU kernel
OPERATOR_SCHEMA(RowwiseMax)
    .NumInputs(1)
    .NumOutputs(1)
    .TensorInference([](const OperatorDef&, const std::vector<TensorShape>& in) {
      return MaxReductionShape(in, true);
    })
    .Input(0, "X", "float (batch, M, N)")
    .Output(0, "Y", "the max of each row, (batch, M)")
    .SetDoc("The maximum of each row of a batch of matrices.");
REGISTER_GRADIENT(RowwiseMax, GetMaxReductionGradient<true>);
REGISTER_CPU_OPERATOR(RowwiseMaxGradient, MaxReductionGradientOp<true>);
REGISTER_GPU_FALLBACK(RowwiseMaxGradient);  // CUDA runs the CPU kernel
OPERATOR_SCHEMA(RowwiseMaxGradient).NumInputs(3).NumOutputs(1).IdenticalTypeAndShapeOfInput(0);

REGISTER_CPU_OPERATOR(ColwiseMax, MaxReductionOp<false>);
REGISTER_GPU_FALLBACK(ColwiseMax);  // CUDA runs the CPU kernel
OPERATOR_SCHEMA(ColwiseMax)
    .NumInputs(1)
    .NumOutputs(1)
    .TensorInference([](const OperatorDef&, const std::vector<TensorShape>& in) {
      return MaxReductionShape(in, false);
    })
    .Input(0, "X", "float (batch, M, N)")
    .Output(0, "Y", "the max of each column, (batch, N)")
    .SetDoc("The maximum of each column of a batch of matrices.");
REGISTER_GRADIENT(ColwiseMax, GetMaxReductionGradient<false>);
REGISTER_CPU_OPERATOR(ColwiseMaxGradient, MaxReductionGradientOp<false>);
REGISTER_GPU_FALLBACK(ColwiseMaxGradient);  // CUDA runs the CPU kernel
OPERATOR_SCHEMA(ColwiseMaxGradient).NumInputs(3).NumOutputs(1).IdenticalTypeAndShapeOfInput(0);

}  // namespace caffe2
