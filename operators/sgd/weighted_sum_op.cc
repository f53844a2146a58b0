// WeightedSum: [X0, w0, X1, w1, ...] -> [Y], Y = sum_i w_i * X_i (float X, each w a 1-element
// float tensor). In place only as X0 -> Y.
// Gradient WeightedSumGradient: [dY, X0, w0, X1, w1, ...] -> [dX0, dX1, ...] (+ [dw0, dw1, ...]
// with grad_on_w=1), dX_i = w_i * dY, dw_i = <dY, X_i>.
#include "core/gradient.h"
#include "core/operator.h"
#include "operators/sgd/weighted_sum_op.h"

namespace caffe2 {
namespace {

float Weight(const Tensor& w, int i) {
  CheckWeightedSumWeight(w, i);
  return w.data<float>()[0];
}

class WeightedSumOp final : public Operator<CPUContext> {
 public:
  using Operator<CPUContext>::Operator;
  bool RunOnDevice() override {
    CheckWeightedSumInputs(*this);
    const Tensor& X0 = Input(0);
    const int64_t n = X0.numel();
    const float w0 = Weight(Input(1), 1);
    Tensor* Y = Output(0);
    if (!IsInputOutputAlias(0, 0)) Y->ResizeLike(X0);
    float* y = Y->mutable_data<float>();
    const float* x0 = X0.data<float>();
    for (int64_t k = 0; k < n; ++k) y[k] = w0 * x0[k];
    for (int i = 2; i < InputSize(); i += 2) {
      const Tensor& Xi = Input(i);
      const float wi = Weight(Input(i + 1), i + 1);
      const float* xi = Xi.data<float>();
      for (int64_t k = 0; k < n; ++k) y[k] += wi * xi[k];
    }
    return true;
  }
};

class WeightedSumGradientOp final : public Operator<CPUContext> {
 public:
  using Operator<CPUContext>::Operator;
  bool RunOnDevice() override {
    const Tensor& dY = Input(0);
    const int pairs = (InputSize() - 1) / 2;
    const bool grad_on_w = GetSingleArgument<bool>("grad_on_w", false);
    CheckWeightedSumGradientOutputs(OutputSize(), pairs, grad_on_w);
    const float* dy = dY.data<float>();
    for (int i = 0; i < pairs; ++i) {
      const Tensor& Xi = Input(1 + 2 * i);
      const float wi = Weight(Input(2 + 2 * i), 2 + 2 * i);
      Tensor* dX = Output(i);
      dX->ResizeLike(dY);
      float* dx = dX->mutable_data<float>();
      for (int64_t k = 0; k < dY.numel(); ++k) dx[k] = wi * dy[k];
      if (grad_on_w) {
        CheckWeightedSumGradientX(Xi, i, dY.numel());
        double dot = 0;
        const float* xi = Xi.data<float>();
        for (int64_t k = 0; k < dY.numel(); ++k) dot += static_cast<double>(dy[k]) * xi[k];
        Tensor* dw = Output(pairs + i);
        dw->Resize(1);
        dw->mutable_data<float>()[0] = static_cast<float>(dot);
      }
    }
    return true;
  }
};

class GetWeightedSumGradient final : public GradientMakerBase {
  using GradientMakerBase::GradientMakerBase;
  std::vector<OperatorDef> GetGradientDefs() override {
    ArgumentHelper args(Def());
    const bool grad_on_w = args.GetSingleArgument<bool>("grad_on_w", false);
    std::vector<std::string> inputs{GO(0)};
    std::vector<std::string> outputs;
    const int pairs = Def().input_size() / 2;
    for (int i = 0; i < Def().input_size(); ++i) inputs.push_back(I(i));
    for (int i = 0; i < pairs; ++i) outputs.push_back(GI(2 * i));
    if (grad_on_w) {
      for (int i = 0; i < pairs; ++i) outputs.push_back(GI(2 * i + 1));
    }
    return SingleGradientDef("WeightedSumGradient", "", inputs, outputs);
  }
};

}  // namespace

REGISTER_CPU_OPERATOR(WeightedSum, WeightedSumOp);
OPERATOR_SCHEMA(WeightedSum)
    .NumInputs([] {
      std::set<int> even;
      for (int i = 2; i <= 256; i += 2) even.insert(i);
      return even;
    }())
    .NumOutputs(1)
    .AllowInplace({{0, 0}})
    .IdenticalTypeAndShapeOfInput(0)
    .Arg("grad_on_w", "Also compute the gradient of each weight")
    .SetDoc("Y = sum_i w_i * X_i over (X, weight) input pairs.");
REGISTER_GRADIENT(WeightedSum, GetWeightedSumGradient);
REGISTER_CPU_OPERATOR(WeightedSumGradient, WeightedSumGradientOp);
OPERATOR_SCHEMA(WeightedSumGradient)
    .NumInputs(3, OpSchema::kInf)
    .NumOutputs(1, OpSchema::kInf)
    .SetDoc("The gradient of WeightedSum: [dY, X0, w0, X1, w1, ...] -> [dX0, dX1, ..., dw0?, ...].")
    .Arg("grad_on_w",
         "(bool, default 0) 1: also output dw_i = <dY, X_i>, one per pair after the dX");

}  // namespace caffe2
