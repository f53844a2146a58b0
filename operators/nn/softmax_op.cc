#include "operators/nn/softmax_op.h"

#include <Eigen/Core>

#include "core/gradient.h"
#include "core/operator.h"
#include "operators/common/parallel_for.h"

namespace caffe2 {

using RowMajor = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;

void SoftmaxRows(const float* x, int64_t N, int64_t D, float* y) {
  if (N == 0 || D == 0) return;  // an empty input gives an empty output
  Eigen::Map<const RowMajor> in(x, N, D);
  Eigen::Map<RowMajor> out(y, N, D);
  ParallelFor(N, ElementWorkers(N, N * D * 8), [&](int64_t begin, int64_t end, int) {
    for (int64_t i = begin; i < end; ++i) {
      const float m = in.row(i).maxCoeff();
      out.row(i) = (in.row(i).array() - m).exp();
      out.row(i) /= out.row(i).sum();
    }
  });
}

namespace {

int CanonicalAxis(int axis, int ndim) {
  const int ax = axis < 0 ? axis + ndim : axis;
  C2_ENFORCE(ax >= 0 && ax < ndim, "axis ", axis, " out of range for a ", ndim, "-d input");
  return ax;
}

class SoftmaxOp final : public Operator<CPUContext> {
 public:
  SoftmaxOp(const OperatorDef& def, Workspace* ws)
      : Operator<CPUContext>(def, ws), axis_(GetSingleArgument<int>("axis", 1)) {}

  bool RunOnDevice() override {
    const Tensor& X = Input(0);
    C2_ENFORCE(X.IsType<float>(), "float input expected, got ", X.meta().name);
    const int ax = CanonicalAxis(axis_, X.ndim());
    Tensor* Y = Output(0);
    Y->ResizeLike(X);
    SoftmaxRows(X.data<float>(), X.size_to_dim(ax), X.size_from_dim(ax), Y->mutable_data<float>());
    return true;
  }

 private:
  int axis_;
};

class SoftmaxGradientOp final : public Operator<CPUContext> {
 public:
  SoftmaxGradientOp(const OperatorDef& def, Workspace* ws)
      : Operator<CPUContext>(def, ws), axis_(GetSingleArgument<int>("axis", 1)) {}

  bool RunOnDevice() override {
    const Tensor& Y = Input(0);
    const Tensor& dY = Input(1);
    C2_ENFORCE(Y.dims() == dY.dims(), "Y ", Tensor::DimsString(Y.dims()), " and dY ",
               Tensor::DimsString(dY.dims()), " must have the same shape");
    const int ax = CanonicalAxis(axis_, Y.ndim());
    const int64_t N = Y.size_to_dim(ax), D = Y.size_from_dim(ax);
    Tensor* dX = Output(0);
    dX->ResizeLike(Y);
    Eigen::Map<const RowMajor> y(Y.data<float>(), N, D), dy(dY.data<float>(), N, D);
    Eigen::Map<RowMajor> dx(dX->mutable_data<float>(), N, D);
    for (int64_t i = 0; i < N; ++i) {
      const float dot = y.row(i).dot(dy.row(i));
      dx.row(i) = (dy.row(i).array() - dot) * y.row(i).array();
    }
    return true;
  }

 private:
  int axis_;
};

class GetSoftmaxGradient final : public GradientMakerBase {
  using GradientMakerBase::GradientMakerBase;
  std::vector<OperatorDef> GetGradientDefs() override {
    return SingleGradientDef("SoftmaxGradient", "", {O(0), GO(0)}, {GI(0)});
  }
};

}  // namespace

REGISTER_CPU_OPERATOR(Softmax, SoftmaxOp);
OPERATOR_SCHEMA(Softmax)
    .NumInputs(1)
    .NumOutputs(1)
    .PointwiseCostInference(3)
    .IdenticalTypeAndShape()
    .Arg("axis", "X is viewed as 2-D at this axis; softmax runs over the trailing part (default 1)")
    .SetDoc("Row-wise softmax of X viewed as (prod(dims[:axis]), prod(dims[axis:])).")
    .Input(0, "X", "Input")
    .Output(0, "Y", "Softmax, shaped like X");
REGISTER_GRADIENT(Softmax, GetSoftmaxGradient);
REGISTER_CPU_OPERATOR(SoftmaxGradient, SoftmaxGradientOp);
OPERATOR_SCHEMA(SoftmaxGradient)
    .NumInputs(2)
    .NumOutputs(1)
    .AllowInplace({{1, 0}})
    .SetDoc("The gradient of Softmax from its output: [Y, dY] -> [dX].")
    .Arg("axis", "(int, default 1) the forward op's axis: Y is viewed as 2-D there");

}  // namespace caffe2
