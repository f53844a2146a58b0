// AveragedLoss: [X] -> [loss], the mean of all elements as a 0-d float tensor.
// Gradient AveragedLossGradient: [X, dLoss] -> [dX], every element dLoss / numel.
#include "core/gradient.h"
#include "core/operator.h"
#include "operators/loss/averaged_loss_op.h"

namespace caffe2 {
namespace {

class AveragedLossOp final : public Operator<CPUContext> {
 public:
  using Operator<CPUContext>::Operator;
  bool RunOnDevice() override {
    const Tensor& X = Input(0);
    CheckAveragedLossInput(X);
    double sum = 0;
    const float* x = X.data<float>();
    for (int64_t i = 0; i < X.numel(); ++i) sum += x[i];
    Tensor* loss = Output(0);
    loss->Resize(std::vector<int64_t>{});
    loss->mutable_data<float>()[0] = static_cast<float>(sum / X.numel());
    return true;
  }
};

class AveragedLossGradientOp final : public Operator<CPUContext> {
 public:
  using Operator<CPUContext>::Operator;
  bool RunOnDevice() override {
    const Tensor& X = Input(0);
    const Tensor& dLoss = Input(1);
    CheckAveragedLossGradient(dLoss);
    Tensor* dX = Output(0);
    dX->ResizeLike(X);
    const float g = dLoss.data<float>()[0] / static_cast<float>(X.numel());
    float* dx = dX->mutable_data<float>();
    for (int64_t i = 0; i < X.numel(); ++i) dx[i] = g;
    return true;
  }
};

class GetAveragedLossGradient final : public GradientMakerBase {
  using GradientMakerBase::GradientMakerBase;
  std::vector<OperatorDef> GetGradientDefs() override {
    return SingleGradientDef("AveragedLossGradient", "", {I(0), GO(0)}, {GI(0)});
  }
};

}  // namespace

REGISTER_CPU_OPERATOR(AveragedLoss, AveragedLossOp);
OPERATOR_SCHEMA(AveragedLoss)
    .NumInputs(1)
    .NumOutputs(1)
    .ScalarType(TensorProto::FLOAT)
    .SetDoc("The mean of all elements of the input, as a scalar.");
REGISTER_GRADIENT(AveragedLoss, GetAveragedLossGradient);
REGISTER_CPU_OPERATOR(AveragedLossGradient, AveragedLossGradientOp);
OPERATOR_SCHEMA(AveragedLossGradient).NumInputs(2).NumOutputs(1);

}  // namespace caffe2
