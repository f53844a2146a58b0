// Dynamic loss scaling for fp16 training (beyond upstream; optimizer.build_fp16_sgd's
// dynamic_loss_scale option builds them). The loss gradient is seeded with the scale S instead of
// 1, so small fp16 gradients do not flush to zero; before the update:
//   UnscaleGradients: [S, g_0, ..., g_k] -> [g_0, ..., g_k, found_nonfinite], g_i in place.
//     found_nonfinite (bool, shape [1]) tells whether any element of any g_i is Inf or NaN; every
//     g_i is multiplied by 1 / S. float or float16 gradients; S a one-element float tensor.
//   The updates take found_nonfinite as an optional last input and then change nothing
//   (FP16MomentumSGDUpdate / FP32MomentumSGDUpdate).
//   UpdateLossScale: [S, good_steps (int64 [1]), found_nonfinite] -> [S, good_steps], in place.
//     On a non-finite step S = max(S * backoff_factor, min_loss_scale) and good_steps = 0; else
//     good_steps += 1, and after growth_interval good steps S = min(S * growth_factor,
//     max_loss_scale) and good_steps = 0. Args growth_factor (2.0), backoff_factor (0.5),
//     growth_interval (1000), min_loss_scale (1.0), max_loss_scale (2^24).
// No gradients. CPU kernels here, CUDA kernels in loss_scale_ops.cu.
#include <cmath>

#include "core/gradient.h"
#include "operators/common/half_cpu.h"
#include "operators/sgd/loss_scale_ops.h"

namespace caffe2 {
namespace {

class UnscaleGradientsOp final : public Operator<CPUContext> {
 public:
  using Operator<CPUContext>::Operator;
  bool RunOnDevice() override {
    const float inv_scale = 1.f / LossScaleValue(Input(0));
    bool found = false;
    for (int i = 1; i < InputSize(); ++i) {
      CheckUnscaleInputs(*this, i);
      Tensor* g = Output(i - 1);
      if (g->IsType<float>()) {
        float* d = g->mutable_data<float>();
        for (int64_t k = 0; k < g->numel(); ++k) {
          found |= !std::isfinite(d[k]);
          d[k] *= inv_scale;
        }
      } else {
        float16* d = g->mutable_data<float16>();
        for (int64_t k = 0; k < g->numel(); ++k) {
          const float v = ToFloat(d[k]);
          found |= !std::isfinite(v);
          d[k] = FloatToHalf(v * inv_scale);
        }
      }
    }
    Tensor* flag = Output(OutputSize() - 1);
    flag->Resize(1);
    flag->mutable_data<bool>()[0] = found;
    return true;
  }
};

class UpdateLossScaleOp final : public Operator<CPUContext> {
 public:
  UpdateLossScaleOp(const OperatorDef& def, Workspace* ws)
      : Operator<CPUContext>(def, ws), args_(ReadLossScaleArgs(*this)) {}
  bool RunOnDevice() override {
    CheckUpdateLossScaleInputs(*this);
    float* scale = Output(0)->mutable_data<float>();
    int64_t* good = Output(1)->mutable_data<int64_t>();
    StepLossScale(args_, Input(2).data<bool>()[0], scale, good);
    return true;
  }

 private:
  LossScaleArgs args_;
};

}  // namespace

void CheckLossScale(const Tensor& scale) {
  C2_ENFORCE(scale.numel() == 1 && scale.IsType<float>(),
             "the loss scale must be a one-element float tensor, got ", scale.DebugString());
}

float LossScaleValue(const Tensor& scale) {
  CheckLossScale(scale);
  return scale.data<float>()[0];
}

void CheckUnscaleInputs(const OperatorBase& op, int i) {
  const Tensor& g = op.Input(i);
  C2_ENFORCE(g.IsType<float>() || g.IsType<float16>(), "gradient ", i - 1, " ('",
             op.debug_def().input(i), "') must be float or float16, got ", g.DebugString());
}

LossScaleArgs ReadLossScaleArgs(const OperatorBase& op) {
  LossScaleArgs a;
  a.growth_factor = op.GetSingleArgument<float>("growth_factor", 2.f);
  a.backoff_factor = op.GetSingleArgument<float>("backoff_factor", 0.5f);
  a.growth_interval = op.GetSingleArgument<int64_t>("growth_interval", 1000);
  a.min_scale = op.GetSingleArgument<float>("min_loss_scale", 1.f);
  a.max_scale = op.GetSingleArgument<float>("max_loss_scale", 16777216.f);
  C2_ENFORCE(a.growth_factor >= 1.f && a.backoff_factor > 0.f && a.backoff_factor <= 1.f,
             "growth_factor must be >= 1 and backoff_factor in (0, 1], got ", a.growth_factor,
             " and ", a.backoff_factor);
  C2_ENFORCE(a.growth_interval >= 1, "growth_interval must be >= 1, got ", a.growth_interval);
  C2_ENFORCE(a.min_scale > 0.f && a.min_scale <= a.max_scale,
             "need 0 < min_loss_scale <= max_loss_scale, got ", a.min_scale, " and ", a.max_scale);
  return a;
}

void CheckUpdateLossScaleInputs(const OperatorBase& op) {
  CheckLossScale(op.Input(0));
  C2_ENFORCE(op.IsInputOutputAlias(0, 0) && op.IsInputOutputAlias(1, 1),
             "the loss scale and good_steps must be updated in place");
  const Tensor& good = op.Input(1);
  C2_ENFORCE(good.numel() == 1 && good.IsType<int64_t>(),
             "good_steps must be a one-element int64 tensor, got ", good.DebugString());
  const Tensor& found = op.Input(2);
  C2_ENFORCE(found.numel() == 1 && found.IsType<bool>(),
             "found_nonfinite must be a one-element bool tensor, got ", found.DebugString());
}

REGISTER_CPU_OPERATOR(UnscaleGradients, UnscaleGradientsOp);
OPERATOR_SCHEMA(UnscaleGradients)
    .NumInputs(2, INT_MAX)
    .NumOutputs(2, INT_MAX)
    .NumInputsOutputs([](int in, int out) { return in == out; })
    .EnforceInplace([](int in, int out) { return in >= 1 && out == in - 1; })
    .SetDoc("Unscales gradients in place by 1/S and reports whether any element is Inf/NaN.");
REGISTER_GRADIENT(UnscaleGradients, ShouldNotDoGradient);

REGISTER_CPU_OPERATOR(UpdateLossScale, UpdateLossScaleOp);
OPERATOR_SCHEMA(UpdateLossScale)
    .NumInputs(3)
    .NumOutputs(2)
    .EnforceInplace({{0, 0}, {1, 1}})
    .Arg("growth_factor", "float, 2.0")
    .Arg("backoff_factor", "float, 0.5")
    .Arg("growth_interval", "int, 1000 good steps before growing")
    .Arg("min_loss_scale", "float, 1.0")
    .Arg("max_loss_scale", "float, 2^24")
    .SetDoc("Backs the loss scale off after a non-finite step, grows it after good ones.");
REGISTER_GRADIENT(UpdateLossScale, ShouldNotDoGradient);

}  // namespace caffe2
