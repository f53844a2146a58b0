// ClipTensorByScaling: [input float, val (one-element float), additional_threshold (optional,
// one-element float)] -> [clipped], clipped = input * threshold / val when val > threshold, else
// input; the threshold is the `threshold` argument (float, required), times additional_threshold
// when given. val is meant to be the input's norm: gradient clipping by norm
// (caffe2.python.modeling.gradient_clipping). clipped may be input. No gradient.
#include "core/gpu_fallback_declarations.h"
#include "core/gradient.h"
#include "core/operator.h"
#include "operators/sgd/sgd_util.h"

namespace caffe2 {
namespace {

class ClipTensorByScalingOp final : public Operator<CPUContext> {
 public:
  ClipTensorByScalingOp(const OperatorDef& def, Workspace* ws)
      : Operator<CPUContext>(def, ws), threshold_(GetSingleArgument<float>("threshold", 0.f)) {
    C2_ENFORCE(HasArgument("threshold"), "the argument threshold is required");
    C2_ENFORCE(threshold_ > 0, "threshold must be positive, got ", threshold_);
  }
  bool RunOnDevice() override {
    const Tensor& X = Input(0);
    C2_ENFORCE(X.IsType<float>(), "input must be a float tensor, got ", X.DebugString());
    const float val = ScalarFloat(Input(1), "val");
    float threshold = threshold_;
    if (InputSize() > 2) threshold *= ScalarFloat(Input(2), "additional_threshold");
    Tensor* Y = Output(0);
    const float* x = X.data<float>();
    if (Y != &X) Y->ResizeLike(X);
    float* y = Y->mutable_data<float>();
    const float scale = val > threshold ? threshold / val : 1.f;
    for (int64_t i = 0; i < X.numel(); ++i) y[i] = x[i] * scale;
    return true;
  }

 private:
  float threshold_;
};

}  // namespace

REGISTER_CPU_OPERATOR(ClipTensorByScaling, ClipTensorByScalingOp);
REGISTER_GPU_FALLBACK(ClipTensorByScaling);  // CUDA runs the CPU kernel
OPERATOR_SCHEMA(ClipTensorByScaling)
    .NumInputs(2, 3)
    .NumOutputs(1)
    .AllowInplace({{0, 0}})
    .IdenticalTypeAndShapeOfInput(0)
    .Arg("threshold", "positive float: the largest val left unscaled", true)
    .Input(0, "input_tensor", "float tensor to clip")
    .Input(1, "val", "one-element float, usually the input's norm")
    .Input(2, "additional_threshold", "optional one-element float multiplying threshold")
    .Output(0, "clipped", "input scaled by threshold / val when val exceeds threshold")
    .SetDoc("Scales a tensor down so that its norm val does not exceed threshold.");
REGISTER_GRADIENT(ClipTensorByScaling, ShouldNotDoGradient);

}  // namespace caffe2
