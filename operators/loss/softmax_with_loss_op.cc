// SoftmaxWithLoss: [logits, labels, weights?] -> [softmax, loss] (spec ops §1.2.6).
// logits are viewed as (N, D) at `axis` (default 1). With label_prob=0 labels are N int32 class ids
// (shape N or (N, 1)), each in [0, D); with label_prob=1 they are (N, D) float distributions whose
// rows sum to 1. loss (0-d) = scale * sum_i w_i * CE_i / sum_i w_i (0 when the weights sum to 0),
// where CE_i = -log(max(p_i[l_i], 1e-20)) or -sum_j t_ij log(max(p_ij, 1e-20)); w_i = 1 without
// weights. SoftmaxWithLossGradient: [logits, labels, weights?, softmax, dLoss] -> [dX], dX = (p -
// target) * w_i * scale * dLoss / sum(w).
#include <cmath>
#include <string>

#include "core/gradient.h"
#include "core/operator.h"
#include "operators/nn/softmax_op.h"
#include "operators/loss/softmax_with_loss_op.h"

namespace caffe2 {
namespace {

constexpr float kLogThreshold = 1e-20f;

class SoftmaxWithLossBase : public Operator<CPUContext> {
 public:
  SoftmaxWithLossBase(const OperatorDef& def, Workspace* ws)
      : Operator<CPUContext>(def, ws),
        args_(ReadSoftmaxWithLossArgs(*this)),
        scale_(args_.scale),
        label_prob_(args_.label_prob) {}

 protected:
  using LossShape = SoftmaxWithLossShape;
  LossShape Check(const Tensor& X, const Tensor& T, const Tensor* W) const {
    return CheckSoftmaxWithLossInputs(args_, X, T, W);
  }

  float Weight(const Tensor* W, int64_t i) const { return W ? W->data<float>()[i] : 1.0f; }
  float TotalWeight(const Tensor* W, int64_t N) const {
    if (!W) return static_cast<float>(N);
    double sum = 0;
    for (int64_t i = 0; i < N; ++i) sum += W->data<float>()[i];
    return static_cast<float>(sum);
  }

  SoftmaxWithLossArgs args_;
  float scale_;
  bool label_prob_;
};

class SoftmaxWithLossOp final : public SoftmaxWithLossBase {
 public:
  using SoftmaxWithLossBase::SoftmaxWithLossBase;

  bool RunOnDevice() override {
    const Tensor& X = Input(0);
    const Tensor& T = Input(1);
    const Tensor* W = InputSize() > 2 ? &Input(2) : nullptr;
    const LossShape s = Check(X, T, W);
    Tensor* P = Output(0);
    P->ResizeLike(X);
    float* p = P->mutable_data<float>();
    SoftmaxRows(X.data<float>(), s.N, s.D, p);
    double loss = 0;
    for (int64_t i = 0; i < s.N; ++i) {
      const float* row = p + i * s.D;
      double ce = 0;
      if (label_prob_) {
        const float* t = T.data<float>() + i * s.D;
        for (int64_t j = 0; j < s.D; ++j) ce -= t[j] * std::log(std::max(row[j], kLogThreshold));
      } else {
        ce = -std::log(std::max(row[T.data<int>()[i]], kLogThreshold));
      }
      loss += Weight(W, i) * ce;
    }
    const float total = TotalWeight(W, s.N);
    Tensor* L = Output(1);
    L->Resize(std::vector<int64_t>{});
    L->mutable_data<float>()[0] = total != 0 ? static_cast<float>(scale_ * loss / total) : 0.0f;
    return true;
  }
};

class SoftmaxWithLossGradientOp final : public SoftmaxWithLossBase {
 public:
  using SoftmaxWithLossBase::SoftmaxWithLossBase;

  bool RunOnDevice() override {
    const bool weighted = InputSize() == 5;
    const Tensor& X = Input(0);
    const Tensor& T = Input(1);
    const Tensor* W = weighted ? &Input(2) : nullptr;
    const Tensor& P = Input(weighted ? 3 : 2);
    const Tensor& dLoss = Input(weighted ? 4 : 3);
    const LossShape s = Check(X, T, W);
    CheckSoftmaxWithLossGradientInputs(X, P, dLoss);
    const float total = TotalWeight(W, s.N);
    const float g = total != 0 ? scale_ * dLoss.data<float>()[0] / total : 0.0f;
    Tensor* dX = Output(0);
    dX->ResizeLike(X);
    const float* p = P.data<float>();
    float* dx = dX->mutable_data<float>();
    for (int64_t i = 0; i < s.N; ++i) {
      const float wg = Weight(W, i) * g;
      for (int64_t j = 0; j < s.D; ++j) {
        const float target =
            label_prob_ ? T.data<float>()[i * s.D + j] : (T.data<int>()[i] == j ? 1.0f : 0.0f);
        dx[i * s.D + j] = (p[i * s.D + j] - target) * wg;
      }
    }
    return true;
  }
};

class GetSoftmaxWithLossGradient final : public GradientMakerBase {
  using GradientMakerBase::GradientMakerBase;
  std::vector<OperatorDef> GetGradientDefs() override {
    std::vector<std::string> inputs{I(0), I(1)};
    if (Def().input_size() == 3) inputs.push_back(I(2));
    inputs.push_back(O(0));
    inputs.push_back(GO(1));
    return SingleGradientDef("SoftmaxWithLossGradient", "", inputs, {GI(0)});
  }
};

}  // namespace

REGISTER_CPU_OPERATOR(SoftmaxWithLoss, SoftmaxWithLossOp);
OPERATOR_SCHEMA(SoftmaxWithLoss)
    .NumInputs(2, 3)
    .NumOutputs(2)
    .TensorInference([](const OperatorDef&, const std::vector<TensorShape>& in) {
      TensorShape p = in.at(0);
      p.set_data_type(TensorProto::FLOAT);
      TensorShape loss;
      loss.set_data_type(TensorProto::FLOAT);
      return std::vector<TensorShape>{p, loss};
    })
    .Arg("scale", "loss multiplier (default 1.0)")
    .Arg("label_prob", "1: labels are per-class probabilities (default 0)")
    .Arg("axis", "logits are viewed as 2-D at this axis (default 1)")
    .Arg("order", "must be NCHW")
    .SetDoc("Softmax followed by the (weighted) cross-entropy averaged over the rows.")
    .Input(0, "logits", "Unscaled scores (N, D)")
    .Input(1, "labels", "int32 class ids (N) or, with label_prob, float (N, D) distributions")
    .Input(2, "weights", "Optional per-row weights (N)")
    .Output(0, "softmax", "Softmax of the logits")
    .Output(1, "loss", "Scalar loss");
REGISTER_GRADIENT(SoftmaxWithLoss, GetSoftmaxWithLossGradient);
REGISTER_CPU_OPERATOR(SoftmaxWithLossGradient, SoftmaxWithLossGradientOp);
OPERATOR_SCHEMA(SoftmaxWithLossGradient)
    .NumInputs(4, 5)
    .NumOutputs(1)
    .SetDoc(
        "The gradient of SoftmaxWithLoss: [logits, labels, weights?, softmax, dloss] -> "
        "[dlogits].")
    .Arg("scale", "(float, default 1.0) the forward op's loss multiplier, >= 0")
    .Arg("label_prob", "(int, default 0) 1: the labels are per-class probabilities")
    .Arg("axis", "(int, default 1) the forward op's axis: the logits are viewed as 2-D there")
    .Arg("order", "(string, default \"NCHW\") only \"NCHW\" is supported");

}  // namespace caffe2
