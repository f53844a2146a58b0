// WeightedSigmoidCrossEntropyWithLogits: [logits, targets, weights] (float, one shape) -> [xent],
// xent = -mean over the last dim of weights * (t log s(x) + (1 - t) log(1 - s(x))), the logits'
// dims without the last (sigmoid_cross_entropy_with_logits_op.h).
// WeightedSigmoidCrossEntropyWithLogitsGradient: [dxent, logits, targets, weights] -> [dlogits],
// dlogits = -dxent * weights * (t - s(x)) / inner; targets and weights get no gradient.
#include "core/gpu_fallback_declarations.h"
#include "core/gradient.h"
#include "core/operator.h"
#include "operators/loss/sigmoid_cross_entropy_with_logits_op.h"

namespace caffe2 {
namespace {

class WeightedSigmoidCrossEntropyWithLogitsOp final : public Operator<CPUContext> {
 public:
  using Operator<CPUContext>::Operator;
  bool RunOnDevice() override {
    const Tensor& logits = Input(0);
    const Tensor& targets = Input(1);
    const Tensor& weights = Input(2);
    const SigmoidXentRows r = CheckSigmoidXentInputs(logits, targets, &weights);
    Tensor* out = Output(0);
    out->Resize(r.loss_dims);
    SigmoidXentForward(SigmoidXentKind::kJoined, r, logits.data<float>(), targets.data<float>(),
                       weights.data<float>(), out->mutable_data<float>());
    return true;
  }
};

class WeightedSigmoidCrossEntropyWithLogitsGradientOp final : public Operator<CPUContext> {
 public:
  using Operator<CPUContext>::Operator;
  bool RunOnDevice() override {
    const Tensor& dY = Input(0);
    const Tensor& logits = Input(1);
    const Tensor& targets = Input(2);
    const Tensor& weights = Input(3);
    const SigmoidXentRows r = CheckSigmoidXentInputs(logits, targets, &weights);
    CheckSigmoidXentGradient(dY, r);
    Tensor* dX = Output(0);
    dX->ResizeLike(logits);
    SigmoidXentBackward(SigmoidXentKind::kJoined, r, dY.data<float>(), logits.data<float>(),
                        targets.data<float>(), weights.data<float>(), dX->mutable_data<float>());
    return true;
  }
};

class GetWeightedSigmoidCrossEntropyWithLogitsGradient final : public GradientMakerBase {
  using GradientMakerBase::GradientMakerBase;
  std::vector<OperatorDef> GetGradientDefs() override {
    return SingleGradientDef("WeightedSigmoidCrossEntropyWithLogitsGradient", "",
                             {GO(0), I(0), I(1), I(2)}, {GI(0)});
  }
};

}  // namespace

REGISTER_CPU_OPERATOR(WeightedSigmoidCrossEntropyWithLogits,
                      WeightedSigmoidCrossEntropyWithLogitsOp);
REGISTER_GPU_FALLBACK(WeightedSigmoidCrossEntropyWithLogits);  // CUDA runs the CPU kernel
OPERATOR_SCHEMA(WeightedSigmoidCrossEntropyWithLogits)
    .NumInputs(3)
    .NumOutputs(1)
    .TensorInference([](const OperatorDef&, const std::vector<TensorShape>& in) {
      TensorShape y;
      y.set_data_type(TensorProto::FLOAT);
      for (int d = 0; d + 1 < in.at(0).dims_size(); ++d) y.add_dims(in[0].dims(d));
      return std::vector<TensorShape>{y};
    })
    .Input(0, "logits", "float logits, any shape")
    .Input(1, "targets", "float targets in [0, 1], the logits' shape")
    .Input(2, "weights", "float per-element weights, the logits' shape")
    .Output(0, "xent", "the weighted loss averaged over the last dimension")
    .SetDoc("Sigmoid cross entropy with a weight per element, averaged over the last dimension.");
REGISTER_GRADIENT(WeightedSigmoidCrossEntropyWithLogits,
                  GetWeightedSigmoidCrossEntropyWithLogitsGradient);
REGISTER_CPU_OPERATOR(WeightedSigmoidCrossEntropyWithLogitsGradient,
                      WeightedSigmoidCrossEntropyWithLogitsGradientOp);
REGISTER_GPU_FALLBACK(WeightedSigmoidCrossEntropyWithLogitsGradient);  // CUDA runs the CPU kernel
OPERATOR_SCHEMA(WeightedSigmoidCrossEntropyWithLogitsGradient)
    .NumInputs(4)
    .NumOutputs(1)
    .IdenticalTypeAndShapeOfInput(1);

}  // namespace caffe2
