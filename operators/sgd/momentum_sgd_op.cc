// Momentum SGD (spec ops §1.2.14). LR = lr[0] is used as given (positive for descent).
//   plain:    g' = LR*grad + momentum*m;  m' = g';                              param -= g'
//   nesterov: m' = momentum*m + LR*grad;  g' = (1+momentum)*m' - momentum*m;    param -= g'
// MomentumSGD:             [grad, moment, lr]          -> [grad_out, moment_out], allow {0->0,
// 1->1} MomentumSGDUpdate:       [grad, moment, lr, param]   -> [grad_out, moment_out, param_out],
//                          allow {0->0, 1->1, 3->2}; a param_out that is not param gets param - g'.
// SparseMomentumSGDUpdate: [grad, moment, lr, param, indices] -> same outputs, enforce {1->1,
// 3->2};
//                          grad holds one row per index; only those rows of moment/param change.
// All: float tensors, SHOULD_NOT_DO_GRADIENT.
#include "core/gradient.h"
#include "operators/common/parallel_for.h"
#include "operators/sgd/sgd_util.h"

namespace caffe2 {
namespace {

// Updates n values; g/m/p may alias the outputs (every element is read before it is written).
inline void MomentumStep(int64_t n, const float* g, const float* m, float lr, float momentum,
                         bool nesterov, float* ng, float* nm, const float* p, float* np) {
  for (int64_t i = 0; i < n; ++i) {
    const float pi = p ? p[i] : 0.f;  // read before any write: outputs may alias inputs
    float mnew;
    const float step = MomentumUpdate(g[i], m[i], lr, momentum, nesterov, &mnew);
    nm[i] = mnew;
    ng[i] = step;
    if (np) np[i] = pi - step;
  }
}

class MomentumSGDUpdateOp final : public Operator<CPUContext> {
 public:
  MomentumSGDUpdateOp(const OperatorDef& def, Workspace* ws)
      : Operator<CPUContext>(def, ws),
        momentum_(GetSingleArgument<float>("momentum", 0.f)),
        nesterov_(GetSingleArgument<int>("nesterov", 0) != 0) {}

  bool RunOnDevice() override {
    const Tensor& grad = Input(0);
    const Tensor& moment = Input(1);
    const float lr = LearningRateValue(Input(2));
    CheckFloat(grad, "grad");
    CheckFloat(moment, "moment");
    CheckSameShape(grad, "grad", moment, "moment");
    const bool update_param = InputSize() == 4;
    if (update_param) {
      CheckFloat(Input(3), "param");
      CheckSameShape(grad, "grad", Input(3), "param");
    }
    Tensor* ng = Output(0);
    Tensor* nm = Output(1);
    ng->ResizeLike(grad);
    nm->ResizeLike(moment);
    const float* p = nullptr;
    float* np = nullptr;
    if (update_param) {
      Tensor* param_out = Output(2);
      if (!IsInputOutputAlias(3, 2)) param_out->ResizeLike(Input(3));
      p = Input(3).data<float>();
      np = param_out->mutable_data<float>();
    }
    const float* g = grad.data<float>();
    const float* m = moment.data<float>();
    float* ngd = ng->mutable_data<float>();
    float* nmd = nm->mutable_data<float>();
    const int64_t n = grad.numel();
    ParallelFor(n, ElementWorkers(n, n), [&](int64_t b, int64_t e, int) {
      MomentumStep(e - b, g + b, m + b, lr, momentum_, nesterov_, ngd + b, nmd + b,
                   p ? p + b : nullptr, np ? np + b : nullptr);
    });
    return true;
  }

 private:
  float momentum_;
  bool nesterov_;
};

class SparseMomentumSGDUpdateOp final : public Operator<CPUContext> {
 public:
  SparseMomentumSGDUpdateOp(const OperatorDef& def, Workspace* ws)
      : Operator<CPUContext>(def, ws),
        momentum_(GetSingleArgument<float>("momentum", 0.f)),
        nesterov_(GetSingleArgument<int>("nesterov", 0) != 0) {}

  bool RunOnDevice() override {
    const Tensor& grad = Input(0);
    const Tensor& moment = Input(1);
    const float lr = LearningRateValue(Input(2));
    const Tensor& param = Input(3);
    CheckSparseMomentumInputs(grad, moment, param);
    const int64_t block = param.size_from_dim(1);
    const std::vector<int64_t> rows = SparseRows(Input(4), param.dim(0));
    CheckSparseGrad(grad, static_cast<int64_t>(rows.size()), block);
    Tensor* ng = Output(0);
    ng->ResizeLike(grad);
    float* m = Output(1)->mutable_data<float>();
    float* p = Output(2)->mutable_data<float>();
    const float* g = grad.data<float>();
    float* gout = ng->mutable_data<float>();
    for (size_t r = 0; r < rows.size(); ++r) {
      const int64_t off = rows[r] * block;
      MomentumStep(block, g + r * block, m + off, lr, momentum_, nesterov_, gout + r * block,
                   m + off, p + off, p + off);
    }
    return true;
  }

 private:
  float momentum_;
  bool nesterov_;
};

}  // namespace

REGISTER_CPU_OPERATOR(MomentumSGD, MomentumSGDUpdateOp);
OPERATOR_SCHEMA(MomentumSGD)
    .NumInputs(3)
    .NumOutputs(2)
    .AllowInplace({{0, 0}, {1, 1}})
    .Arg("momentum", "Momentum coefficient (0.0)")
    .Arg("nesterov", "Use Nesterov momentum (0)")
    .SetDoc(
        "Momentum step without the parameter update: [grad, moment, lr] -> [grad_out, "
        "moment_out].");
REGISTER_GRADIENT(MomentumSGD, ShouldNotDoGradient);

REGISTER_CPU_OPERATOR(MomentumSGDUpdate, MomentumSGDUpdateOp);
OPERATOR_SCHEMA(MomentumSGDUpdate)
    .NumInputs(4)
    .NumOutputs(3)
    .AllowInplace({{0, 0}, {1, 1}, {3, 2}})
    .Arg("momentum", "Momentum coefficient (0.0)")
    .Arg("nesterov", "Use Nesterov momentum (0)")
    .SetDoc("Momentum SGD step: [grad, moment, lr, param] -> [grad_out, moment_out, param_out].");
REGISTER_GRADIENT(MomentumSGDUpdate, ShouldNotDoGradient);

REGISTER_CPU_OPERATOR(SparseMomentumSGDUpdate, SparseMomentumSGDUpdateOp);
OPERATOR_SCHEMA(SparseMomentumSGDUpdate)
    .NumInputs(5)
    .NumOutputs(3)
    .EnforceInplace({{1, 1}, {3, 2}})
    .AllowInplace({{0, 0}, {1, 1}, {3, 2}})
    .Arg("momentum", "Momentum coefficient (0.0)")
    .Arg("nesterov", "Use Nesterov momentum (0)")
    .SetDoc(
        "Momentum SGD step on the rows named by indices: "
        "[grad, moment, lr, param, indices] -> [grad_out, moment_out, param_out].");
REGISTER_GRADIENT(SparseMomentumSGDUpdate, ShouldNotDoGradient);

}  // namespace caffe2
