// ElementwiseLinear: [X, w, b] -> [Y], X viewed as (N, D) with N = prod(X.dims[:axis]) (arg `axis`,
// 1); w and b have D elements; Y[n, d] = X[n, d] w[d] + b[d]. float.
// ElementwiseLinearGradient: [dY, X, w] -> [dX, dw, db], dX = dY w, dw = sum_n dY X, db = sum_n dY.
#include <Eigen/Core>

#include "core/gradient.h"
#include "core/operator.h"
#include "operators/elementwise/elementwise_linear_op.h"

namespace caffe2 {
namespace {

using RowMajor = Eigen::Array<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
using ConstMap = Eigen::Map<const RowMajor>;
using Map = Eigen::Map<RowMajor>;
using ConstRow = Eigen::Map<const Eigen::Array<float, 1, Eigen::Dynamic>>;
using Row = Eigen::Map<Eigen::Array<float, 1, Eigen::Dynamic>>;

class ElementwiseLinearOp final : public Operator<CPUContext> {
 public:
  using Operator<CPUContext>::Operator;
  bool RunOnDevice() override {
    const Tensor& X = Input(0);
    const Tensor& w = Input(1);
    const Tensor& b = Input(2);
    const NDShape s = CheckElementwiseLinearShapes(X, w, GetSingleArgument<int>("axis", 1));
    CheckElementwiseLinearBias(b, s);
    Tensor* Y = Output(0);
    Y->Resize(X.dims());
    ConstMap x(X.data<float>(), s.N, s.D);
    Map(Y->mutable_data<float>(), s.N, s.D) =
        (x.rowwise() * ConstRow(w.data<float>(), s.D)).rowwise() + ConstRow(b.data<float>(), s.D);
    return true;
  }
};

class ElementwiseLinearGradientOp final : public Operator<CPUContext> {
 public:
  using Operator<CPUContext>::Operator;
  bool RunOnDevice() override {
    const Tensor& dY = Input(0);
    const Tensor& X = Input(1);
    const Tensor& w = Input(2);
    const NDShape s = CheckElementwiseLinearShapes(X, w, GetSingleArgument<int>("axis", 1));
    CheckElementwiseLinearGradient(dY, X);
    ConstMap dy(dY.data<float>(), s.N, s.D);
    ConstMap x(X.data<float>(), s.N, s.D);
    Tensor* dw = Output(1);
    Tensor* db = Output(2);
    dw->Resize(s.D);
    db->Resize(s.D);
    Row(dw->mutable_data<float>(), s.D) = (dy * x).colwise().sum();
    Row(db->mutable_data<float>(), s.D) = dy.colwise().sum();
    Tensor* dX = Output(0);
    dX->Resize(X.dims());
    Map(dX->mutable_data<float>(), s.N, s.D) = dy.rowwise() * ConstRow(w.data<float>(), s.D);
    return true;
  }
};

class GetElementwiseLinearGradient final : public GradientMakerBase {
  using GradientMakerBase::GradientMakerBase;
  std::vector<OperatorDef> GetGradientDefs() override {
    return SingleGradientDef("ElementwiseLinearGradient", "", {GO(0), I(0), I(1)},
                             {GI(0), GI(1), GI(2)});
  }
};

}  // namespace

REGISTER_CPU_OPERATOR(ElementwiseLinear, ElementwiseLinearOp);
OPERATOR_SCHEMA(ElementwiseLinear)
    .NumInputs(3)
    .NumOutputs(1)
    .IdenticalTypeAndShapeOfInput(0)
    .SetDoc("Y = X * w + b with w and b broadcast along the rows of X viewed as (N, D) at axis.")
    .Arg("axis", "int, default 1: X.dims[axis:] form D");
REGISTER_GRADIENT(ElementwiseLinear, GetElementwiseLinearGradient);
REGISTER_CPU_OPERATOR(ElementwiseLinearGradient, ElementwiseLinearGradientOp);
OPERATOR_SCHEMA(ElementwiseLinearGradient)
    .NumInputs(3)
    .NumOutputs(3)
    .SetDoc("The gradient of ElementwiseLinear: [dY, X, w] -> [dX, dw, db].")
    .Arg("axis", "(int, default 1) the forward op's axis: X.dims[axis:] form D");

}  // namespace caffe2
