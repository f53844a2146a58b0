// RmsProp (spec ops §1.3): [grad, mean_squares, mom, lr] -> [grad_out, mean_squares_out, mom_out],
// allow {0->0, 1->1, 2->2}. Float tensors of one shape; lr one-element float.
//   ms'  = ms + (1 - decay) * (g^2 - ms)
//   mom' = momentum * mom + lr * g / sqrt(epsilon + ms')
//   grad_out = mom'
// (the optimizer then applies grad_out with MomentumSGDUpdate, momentum 0).
// Args decay (0.9), momentum (0.0), epsilon (1e-5). SHOULD_NOT_DO_GRADIENT.
#include <cmath>

#include "core/gradient.h"
#include "operators/sgd/sgd_util.h"

namespace caffe2 {
namespace {

class RmsPropOp final : public Operator<CPUContext> {
 public:
  RmsPropOp(const OperatorDef& def, Workspace* ws)
      : Operator<CPUContext>(def, ws),
        decay_(GetSingleArgument<float>("decay", 0.9f)),
        momentum_(GetSingleArgument<float>("momentum", 0.f)),
        epsilon_(GetSingleArgument<float>("epsilon", 1e-5f)) {}

  bool RunOnDevice() override {
    const Tensor& grad = Input(0);
    const Tensor& ms = Input(1);
    const Tensor& mom = Input(2);
    CheckFloat(grad, "grad");
    CheckFloat(ms, "mean_squares");
    CheckFloat(mom, "mom");
    CheckSameShape(grad, "grad", ms, "mean_squares");
    CheckSameShape(grad, "grad", mom, "mom");
    const float lr = LearningRateValue(Input(3));
    for (int i = 0; i < 3; ++i) Output(i)->ResizeLike(grad);
    const float* g = grad.data<float>();
    const float* s = ms.data<float>();
    const float* m = mom.data<float>();
    float* gout = Output(0)->mutable_data<float>();
    float* sout = Output(1)->mutable_data<float>();
    float* mout = Output(2)->mutable_data<float>();
    for (int64_t i = 0; i < grad.numel(); ++i) {
      const float gi = g[i];
      const float snew = s[i] + (1 - decay_) * (gi * gi - s[i]);
      const float mnew = momentum_ * m[i] + lr * gi / std::sqrt(epsilon_ + snew);
      sout[i] = snew;
      mout[i] = mnew;
      gout[i] = mnew;
    }
    return true;
  }

 private:
  float decay_, momentum_, epsilon_;
};

}  // namespace

REGISTER_CPU_OPERATOR(RmsProp, RmsPropOp);
OPERATOR_SCHEMA(RmsProp)
    .NumInputs(4)
    .NumOutputs(3)
    .AllowInplace({{0, 0}, {1, 1}, {2, 2}})
    .Arg("decay", "Decay of the mean squares (0.9)")
    .Arg("momentum", "Momentum coefficient (0.0)")
    .Arg("epsilon", "Added under the square root (1e-5)")
    .SetDoc(
        "RmsProp step: [grad, mean_squares, mom, lr] -> [grad_out, mean_squares_out, mom_out].");
REGISTER_GRADIENT(RmsProp, ShouldNotDoGradient);

}  // namespace caffe2
