// SigmoidCrossEntropyWithLogits: [logits, targets] (float, one shape) -> [xent], xent has the
// logits' dims without the last, xent = -mean over the last dim of the log-likelihood of the target
// under sigmoid(logit) (sigmoid_cross_entropy_with_logits_op.h). Args log_D_trick and
// unjoined_lr_loss (default 0, at most one set) pick the other two log-likelihoods of upstream.
// SigmoidCrossEntropyWithLogitsGradient: [dxent, logits, targets] -> [dlogits],
// dlogits = -dxent * dLL/dx / inner. No gradient flows to the targets, as upstream.
#include "core/gpu_fallback_declarations.h"
#include "core/gradient.h"
#include "core/operator.h"
#include "operators/loss/sigmoid_cross_entropy_with_logits_op.h"

namespace caffe2 {
namespace {

SigmoidXentKind ReadKind(const OperatorBase& op) {
  const bool log_d_trick = op.GetSingleArgument<bool>("log_D_trick", false);
  const bool unjoined = op.GetSingleArgument<bool>("unjoined_lr_loss", false);
  C2_ENFORCE(!(log_d_trick && unjoined), "log_D_trick and unjoined_lr_loss cannot both be set");
  if (log_d_trick) return SigmoidXentKind::kLogDTrick;
  return unjoined ? SigmoidXentKind::kUnjoined : SigmoidXentKind::kJoined;
}

class SigmoidCrossEntropyWithLogitsOp final : public Operator<CPUContext> {
 public:
  SigmoidCrossEntropyWithLogitsOp(const OperatorDef& def, Workspace* ws)
      : Operator<CPUContext>(def, ws), kind_(ReadKind(*this)) {}
  bool RunOnDevice() override {
    const Tensor& logits = Input(0);
    const Tensor& targets = Input(1);
    const SigmoidXentRows r = CheckSigmoidXentInputs(logits, targets);
    Tensor* out = Output(0);
    out->Resize(r.loss_dims);
    SigmoidXentForward(kind_, r, logits.data<float>(), targets.data<float>(), nullptr,
                       out->mutable_data<float>());
    return true;
  }

 private:
  SigmoidXentKind kind_;
};

class SigmoidCrossEntropyWithLogitsGradientOp final : public Operator<CPUContext> {
 public:
  SigmoidCrossEntropyWithLogitsGradientOp(const OperatorDef& def, Workspace* ws)
      : Operator<CPUContext>(def, ws), kind_(ReadKind(*this)) {}
  bool RunOnDevice() override {
    const Tensor& dY = Input(0);
    const Tensor& logits = Input(1);
    const Tensor& targets = Input(2);
    const SigmoidXentRows r = CheckSigmoidXentInputs(logits, targets);
    CheckSigmoidXentGradient(dY, r);
    Tensor* dX = Output(0);
    dX->ResizeLike(logits);
    SigmoidXentBackward(kind_, r, dY.data<float>(), logits.data<float>(), targets.data<float>(),
                        nullptr, dX->mutable_data<float>());
    return true;
  }

 private:
  SigmoidXentKind kind_;
};

class GetSigmoidCrossEntropyWithLogitsGradient final : public GradientMakerBase {
  using GradientMakerBase::GradientMakerBase;
  std::vector<OperatorDef> GetGradientDefs() override {
    return SingleGradientDef("SigmoidCrossEntropyWithLogitsGradient", "", {GO(0), I(0), I(1)},
                             {GI(0)});
  }
};

}  // namespace

REGISTER_CPU_OPERATOR(SigmoidCrossEntropyWithLogits, SigmoidCrossEntropyWithLogitsOp);
REGISTER_GPU_FALLBACK(SigmoidCrossEntropyWithLogits);  // CUDA runs the CPU kernel
OPERATOR_SCHEMA(SigmoidCrossEntropyWithLogits)
    .NumInputs(2)
    .NumOutputs(1)
    .TensorInference([](const OperatorDef&, const std::vector<TensorShape>& in) {
      TensorShape y;
      y.set_data_type(TensorProto::FLOAT);
      for (int d = 0; d + 1 < in.at(0).dims_size(); ++d) y.add_dims(in[0].dims(d));
      return std::vector<TensorShape>{y};
    })
    .Arg("log_D_trick", "1: the loss is -(2t - 1) log sigmoid(x) (default 0)")
    .Arg("unjoined_lr_loss", "1: the unjoined logistic-regression loss (default 0)")
    .Input(0, "logits", "float logits, any shape")
    .Input(1, "targets", "float targets in [0, 1], the logits' shape")
    .Output(0, "xent", "the loss averaged over the last dimension: the logits' dims without it")
    .SetDoc("Sigmoid cross entropy of targets against logits, averaged over the last dimension.");
REGISTER_GRADIENT(SigmoidCrossEntropyWithLogits, GetSigmoidCrossEntropyWithLogitsGradient);
REGISTER_CPU_OPERATOR(SigmoidCrossEntropyWithLogitsGradient,
                      SigmoidCrossEntropyWithLogitsGradientOp);
REGISTER_GPU_FALLBACK(SigmoidCrossEntropyWithLogitsGradient);  // CUDA runs the CPU kernel
OPERATOR_SCHEMA(SigmoidCrossEntropyWithLogitsGradient)
    .NumInputs(3)
    .NumOutputs(1)
    .IdenticalTypeAndShapeOfInput(1)
    .SetDoc(
        "The gradient of SigmoidCrossEntropyWithLogits: [dxent, logits, targets] -> "
        "[dlogits].")
    .Arg("log_D_trick", "(bool, default 0) the forward op's log_D_trick loss")
    .Arg("unjoined_lr_loss",
         "(bool, default 0) the forward op's unjoined loss; not with log_D_trick");

}  // namespace caffe2
