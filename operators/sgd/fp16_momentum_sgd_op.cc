// FP16MomentumSGDUpdate / FP32MomentumSGDUpdate (spec ops §1.2.14; CUDA-only upstream, where the
// fp16 optimizer of optimizer.py uses them): MomentumSGDUpdate with L2 weight decay folded into
// the gradient, for float16 (FP16...) or float (FP32...) grad, moment and param.
//   [grad, moment, lr, param, (skip)] -> [grad_out, moment_out, param_out],
//   allow {0->0, 1->1, 3->2}. The optional `skip` (one bool, beyond upstream) is the
//   found_nonfinite flag of UnscaleGradients (loss_scale_ops.cc): when true nothing changes.
//   Args: momentum (0.0), nesterov (0), weight_decay (0.0), fp32_update (accepted; the math is
//   always done in float, so it changes nothing).
//   g = grad + weight_decay * param, then the MomentumSGDUpdate rules with LR = lr[0] as given:
//     plain:    g' = LR*g + momentum*m;  m' = g'
//     nesterov: m' = momentum*m + LR*g;  g' = (1+momentum)*m' - momentum*m
//     param' = param - g'
// Beyond upstream: a CPU kernel too (the reference the CUDA kernel is checked against).
#include "core/gradient.h"
#include "operators/common/half_cpu.h"
#include "operators/sgd/sgd_util.h"

namespace caffe2 {
namespace {

bool SkipStep(const Tensor& skip) {
  C2_ENFORCE(skip.numel() == 1 && skip.IsType<bool>(), "skip must be one bool, got ",
             skip.DebugString());
  return skip.data<bool>()[0];
}

template <class T>
class MomentumSGDWithDecayOp final : public Operator<CPUContext> {
 public:
  MomentumSGDWithDecayOp(const OperatorDef& def, Workspace* ws)
      : Operator<CPUContext>(def, ws),
        momentum_(GetSingleArgument<float>("momentum", 0.f)),
        weight_decay_(GetSingleArgument<float>("weight_decay", 0.f)),
        nesterov_(GetSingleArgument<int>("nesterov", 0) != 0) {}

  bool RunOnDevice() override {
    const Tensor& grad = Input(0);
    const Tensor& moment = Input(1);
    const Tensor& param = Input(3);
    const float lr = LearningRateValue(Input(2));
    for (int i : {0, 1, 3}) {
      C2_ENFORCE(Input(i).template IsType<T>(), "input ", i, " ('", debug_def().input(i),
                 "') must be a ", TypeMeta::Make<T>().name, " tensor, got ",
                 Input(i).DebugString());
    }
    CheckSameShape(grad, "grad", moment, "moment");
    CheckSameShape(grad, "grad", param, "param");
    if (InputSize() == 5 && SkipStep(Input(4))) {
      for (int i : {0, 1, 3}) {
        const int out = i == 3 ? 2 : i;
        if (!IsInputOutputAlias(i, out)) Output(out)->CopyFrom(Input(i));
      }
      return true;
    }
    Tensor* ng = Output(0);
    Tensor* nm = Output(1);
    Tensor* np = Output(2);
    ng->ResizeLike(grad);
    nm->ResizeLike(moment);
    np->ResizeLike(param);
    const T* g = grad.data<T>();
    const T* m = moment.data<T>();
    const T* p = param.data<T>();
    T* ngd = ng->mutable_data<T>();
    T* nmd = nm->mutable_data<T>();
    T* npd = np->mutable_data<T>();
    for (int64_t i = 0; i < grad.numel(); ++i) {
      const float pi = ToFloat(p[i]);
      const float gi = ToFloat(g[i]) + weight_decay_ * pi;
      const float mi = ToFloat(m[i]);
      float mnew;
      const float step = MomentumUpdate(gi, mi, lr, momentum_, nesterov_, &mnew);
      ngd[i] = FromFloat<T>(step);
      nmd[i] = FromFloat<T>(mnew);
      npd[i] = FromFloat<T>(pi - step);
    }
    return true;
  }

 private:
  float momentum_;
  float weight_decay_;
  bool nesterov_;
};

}  // namespace

REGISTER_CPU_OPERATOR(FP16MomentumSGDUpdate, MomentumSGDWithDecayOp<float16>);
REGISTER_CPU_OPERATOR(FP32MomentumSGDUpdate, MomentumSGDWithDecayOp<float>);
#define C2_MOMENTUM_WITH_DECAY_SCHEMA(Type, doc)                                               \
  OPERATOR_SCHEMA(Type)                                                                        \
      .NumInputs(4, 5)                                                                         \
      .NumOutputs(3)                                                                           \
      .AllowInplace({{0, 0}, {1, 1}, {3, 2}})                                                  \
      .Arg("momentum", "Momentum coefficient (0.0)")                                           \
      .Arg("nesterov", "Use Nesterov momentum (0)")                                            \
      .Arg("weight_decay", "L2 weight decay added to the gradient (0.0)")                      \
      .Arg("fp32_update", "Accepted for compatibility; the update is always computed in fp32") \
      .SetDoc(doc);                                                                            \
  REGISTER_GRADIENT(Type, ShouldNotDoGradient)
C2_MOMENTUM_WITH_DECAY_SCHEMA(FP16MomentumSGDUpdate,
                              "MomentumSGDUpdate with weight decay on float16 tensors.");
C2_MOMENTUM_WITH_DECAY_SCHEMA(FP32MomentumSGDUpdate,
                              "MomentumSGDUpdate with weight decay on float tensors.");
#undef C2_MOMENTUM_WITH_DECAY_SCHEMA

}  // namespace caffe2
