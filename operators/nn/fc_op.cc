// FC: [X, W, b] -> [Y], Y = X W^T + b (spec ops §1.2.5), float.
// X is viewed as (M, K) with M = prod(X.dims[:axis]); W as (N, K) with N = prod(W.dims[:axis_w]).
// Y has dims X.dims[:axis] + [N].
// FCGradient: [X, W, dY] -> [dW, db, dX] with dW = dY^T X, db = column sums of dY, dX = dY W.
// FCTransposed / FCTransposedGradient: the same with W stored as (K, N), viewed with K =
// prod(W.dims[:axis_w]) and N = prod(W.dims[axis_w:]): Y = X W + b, dW = X^T dY, dX = dY W^T.
#include <Eigen/Core>

#include "core/gradient.h"
#include "core/operator.h"
#include "operators/common/gemm.h"
#include "operators/common/input_checks.h"
#include "operators/nn/fc_shape.h"

namespace caffe2 {
namespace {

using RowMajor = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
using ConstMap = Eigen::Map<const RowMajor>;
using Map = Eigen::Map<RowMajor>;

template <bool kTransposed>
class FCOp final : public Operator<CPUContext> {
 public:
  FCOp(const OperatorDef& def, Workspace* ws)
      : Operator<CPUContext>(def, ws),
        axis_(GetSingleArgument<int>("axis", 1)),
        axis_w_(GetSingleArgument<int>("axis_w", 1)) {}

  bool RunOnDevice() override {
    const Tensor& X = Input(0);
    const Tensor& W = Input(1);
    const Tensor& b = Input(2);
    CheckFloat(X, "X");
    CheckFloat(W, "W");
    FCShape s = CheckFCShapes(X, W, axis_, axis_w_, kTransposed);
    C2_ENFORCE(b.numel() == s.N && b.IsType<float>(), "b ", Tensor::DimsString(b.dims()),
               " must hold ", s.N, " floats");
    Tensor* Y = Output(0);
    Y->Resize(FCOutputDims(X, axis_, s.N));
    float* y = Y->mutable_data<float>();
    // Y starts as the bias in every row; the GEMM adds X W^T (or X W) to it.
    Map(y, s.M, s.N).rowwise() = Eigen::Map<const Eigen::RowVectorXf>(b.data<float>(), s.N);
    CpuSgemm(false, !kTransposed, s.M, s.N, s.K, 1.f, X.data<float>(), s.K, W.data<float>(),
             kTransposed ? s.N : s.K, 1.f, y, s.N);
    return true;
  }

 private:
  int axis_, axis_w_;
};

template <bool kTransposed>
class FCGradientOp final : public Operator<CPUContext> {
 public:
  FCGradientOp(const OperatorDef& def, Workspace* ws)
      : Operator<CPUContext>(def, ws),
        axis_(GetSingleArgument<int>("axis", 1)),
        axis_w_(GetSingleArgument<int>("axis_w", 1)) {}

  bool RunOnDevice() override {
    const Tensor& X = Input(0);
    const Tensor& W = Input(1);
    const Tensor& dY = Input(2);
    CheckFloat(X, "X");
    CheckFloat(W, "W");
    FCShape s = CheckFCShapes(X, W, axis_, axis_w_, kTransposed);
    CheckFCGradientOutput(dY, s);
    ConstMap dy(dY.data<float>(), s.M, s.N);
    Tensor* dW = Output(0);
    dW->ResizeLike(W);
    const float* x = X.data<float>();
    if (kTransposed) {
      CpuSgemm(true, false, s.K, s.N, s.M, 1.f, x, s.K, dY.data<float>(), s.N, 0.f,
               dW->mutable_data<float>(), s.N);
    } else {
      CpuSgemm(true, false, s.N, s.K, s.M, 1.f, dY.data<float>(), s.N, x, s.K, 0.f,
               dW->mutable_data<float>(), s.K);
    }
    Tensor* db = Output(1);
    db->Resize(s.N);
    Eigen::Map<Eigen::RowVectorXf>(db->mutable_data<float>(), s.N) = dy.colwise().sum();
    if (OutputSize() == 3) {
      Tensor* dX = Output(2);
      dX->ResizeLike(X);
      CpuSgemm(false, kTransposed, s.M, s.K, s.N, 1.f, dY.data<float>(), s.N, W.data<float>(),
               kTransposed ? s.N : s.K, 0.f, dX->mutable_data<float>(), s.K);
    }
    return true;
  }

 private:
  int axis_, axis_w_;
};

class GetFCGradient final : public GradientMakerBase {
  using GradientMakerBase::GradientMakerBase;
  std::vector<OperatorDef> GetGradientDefs() override {
    return SingleGradientDef("FCGradient", "", {I(0), I(1), GO(0)}, {GI(1), GI(2), GI(0)});
  }
};

class GetFCTransposedGradient final : public GradientMakerBase {
  using GradientMakerBase::GradientMakerBase;
  std::vector<OperatorDef> GetGradientDefs() override {
    return SingleGradientDef("FCTransposedGradient", "", {I(0), I(1), GO(0)},
                             {GI(1), GI(2), GI(0)});
  }
};

std::vector<TensorShape> FCShapeInference(const OperatorDef& def,
                                          const std::vector<TensorShape>& in, bool transposed) {
  ArgumentHelper args(def);
  int axis = args.GetSingleArgument<int>("axis", 1);
  int axis_w = args.GetSingleArgument<int>("axis_w", 1);
  const TensorShape& x = in.at(0);
  const TensorShape& w = in.at(1);
  const FCShape s = CheckFCDims({x.dims().begin(), x.dims().end()},
                                {w.dims().begin(), w.dims().end()}, axis, axis_w, transposed);
  if (axis < 0) axis += x.dims_size();
  TensorShape y;
  y.set_data_type(x.data_type());
  for (int i = 0; i < axis; ++i) y.add_dims(x.dims(i));
  y.add_dims(s.N);
  return {y};
}

std::vector<TensorShape> FCInference(const OperatorDef& def, const std::vector<TensorShape>& in) {
  return FCShapeInference(def, in, false);
}

}  // namespace

REGISTER_CPU_OPERATOR(FC, FCOp<false>);
OPERATOR_SCHEMA(FC)
    .NumInputs(3)
    .NumOutputs(1)
    .TensorInference(FCInference)
    .CostInference([](const OperatorDef& def, const std::vector<TensorShape>& in) {
      auto out = FCInference(def, in);
      uint64_t m = 1, k = 1;
      for (int i = 0; i < out[0].dims_size() - 1; ++i) m *= out[0].dims(i);
      uint64_t n = out[0].dims(out[0].dims_size() - 1);
      for (int64_t d : in[0].dims()) k *= d;
      k /= m;
      OpSchema::Cost c;
      c.flops = 2 * m * n * k;
      c.bytes_moved = sizeof(float) * (m * k + n * k + n + m * n);
      c.params_bytes = sizeof(float) * (n * k + n);
      return c;
    })
    .Arg("axis", "X is flattened to 2-D at this axis (default 1)")
    .Arg("axis_w", "W is flattened to 2-D at this axis (default 1)")
    .Arg("freeze_bias",
         "(bool) passed by brew.fc when the bias is a computed (untrained) parameter; the kernel "
         "ignores it")
    .SetDoc("Fully connected layer: Y = X W^T + b.")
    .Input(0, "X", "Input, flattened to (M, K)")
    .Input(1, "W", "Weights (N, K)")
    .Input(2, "b", "Bias (N)")
    .Output(0, "Y", "Output (M, N)");
REGISTER_GRADIENT(FC, GetFCGradient);

REGISTER_CPU_OPERATOR(FCGradient, FCGradientOp<false>);
OPERATOR_SCHEMA(FCGradient)
    .NumInputs(3)
    .NumOutputs(2, 3)
    .SetDoc("The gradient of FC: [X, W, dY] -> [dW, db, dX?].")
    .Arg("axis", "(int, default 1) the forward op's axis: X is flattened to 2-D there")
    .Arg("axis_w", "(int, default 1) the forward op's axis_w: W is flattened to 2-D there");

REGISTER_CPU_OPERATOR(FCTransposed, FCOp<true>);
OPERATOR_SCHEMA(FCTransposed)
    .NumInputs(3)
    .NumOutputs(1)
    .TensorInference([](const OperatorDef& def, const std::vector<TensorShape>& in) {
      return FCShapeInference(def, in, true);
    })
    .Arg("axis", "X is flattened to 2-D at this axis (default 1)")
    .Arg("axis_w", "W is flattened to 2-D at this axis (default 1)")
    .SetDoc("Fully connected layer with W stored as (K, N): Y = X W + b.")
    .Input(0, "X", "Input, flattened to (M, K)")
    .Input(1, "W", "Weights (K, N)")
    .Input(2, "b", "Bias (N)")
    .Output(0, "Y", "Output (M, N)");
REGISTER_GRADIENT(FCTransposed, GetFCTransposedGradient);
REGISTER_CPU_OPERATOR(FCTransposedGradient, FCGradientOp<true>);
OPERATOR_SCHEMA(FCTransposedGradient)
    .NumInputs(3)
    .NumOutputs(2, 3)
    .SetDoc("The gradient of FCTransposed: [X, W, dY] -> [dW, db, dX?].")
    .Arg("axis", "(int, default 1) the forward op's axis: X is flattened to 2-D there")
    .Arg("axis_w", "(int, default 1) the forward op's axis_w: W is flattened to 2-D there");

}  // namespace caffe2
