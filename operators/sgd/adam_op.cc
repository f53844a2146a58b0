// Adam (spec ops §1.3). With t = iter + 1 and corr = sqrt(1 - beta2^t) / (1 - beta1^t):
//   m1' = beta1*m1 + (1-beta1)*g;  m2' = beta2*m2 + (1-beta2)*g^2;
//   param' = param + lr * corr * m1' / (sqrt(m2') + epsilon)      (lr is already negative)
// Adam:              [param, m1, m2, grad, lr, iter] -> [param, m1, m2], allow {0->0, 1->1, 2->2}
// SparseAdam:        [param, m1, m2, indices, grad, lr, iter] -> [param, m1, m2],
//                    enforce {0->0, 1->1, 2->2}; grad holds one param row per index.
// RowWiseSparseAdam: as SparseAdam, but m2 has one value per row (shape [rows]) updated with the
//                    mean of g^2 over the row.
// iter is the one-element int64 counter. Args beta1 (0.9), beta2 (0.999), epsilon (1e-5).
// All SHOULD_NOT_DO_GRADIENT.
#include <cmath>

#include "core/gradient.h"
#include "operators/sgd/sgd_util.h"

namespace caffe2 {
namespace {

class AdamBase : public Operator<CPUContext> {
 public:
  AdamBase(const OperatorDef& def, Workspace* ws)
      : Operator<CPUContext>(def, ws),
        beta1_(GetSingleArgument<float>("beta1", 0.9f)),
        beta2_(GetSingleArgument<float>("beta2", 0.999f)),
        epsilon_(GetSingleArgument<float>("epsilon", 1e-5f)) {}

 protected:
  // lr * corr for the iteration held by input `iter_index`.
  float StepSize(int lr_index, int iter_index) const {
    const float lr = LearningRateValue(Input(lr_index));
    const double corr = AdamCorrection(beta1_, beta2_, Input(iter_index));
    return static_cast<float>(lr * corr);
  }
  // Output i shaped like input i, written over a copy of the input unless the two are one blob.
  float* OutputLike(int i) {
    const Tensor& in = Input(i);
    CheckFloat(in, i == 0 ? "param" : i == 1 ? "m1" : "m2");
    Tensor* out = Output(i);
    if (!IsInputOutputAlias(i, i)) out->CopyFrom(in);
    return out->mutable_data<float>();
  }

  float beta1_, beta2_, epsilon_;
};

class AdamOp final : public AdamBase {
 public:
  using AdamBase::AdamBase;
  bool RunOnDevice() override {
    const Tensor& grad = Input(3);
    CheckFloat(grad, "grad");
    for (int i = 0; i < 3; ++i)
      CheckSameShape(Input(i), i == 0 ? "param" : i == 1 ? "m1" : "m2", grad, "grad");
    const float step = StepSize(4, 5);
    float* p = OutputLike(0);
    float* m1 = OutputLike(1);
    float* m2 = OutputLike(2);
    const float* g = grad.data<float>();
    for (int64_t i = 0; i < grad.numel(); ++i) {
      m1[i] = beta1_ * m1[i] + (1 - beta1_) * g[i];
      m2[i] = beta2_ * m2[i] + (1 - beta2_) * g[i] * g[i];
      p[i] += step * m1[i] / (std::sqrt(m2[i]) + epsilon_);
    }
    return true;
  }
};

template <bool kRowWise>
class SparseAdamOp final : public AdamBase {
 public:
  using AdamBase::AdamBase;
  bool RunOnDevice() override {
    const Tensor& param = Input(0);
    const Tensor& grad = Input(4);
    CheckFloat(grad, "grad");
    CheckSameShape(param, "param", Input(1), "m1");
    CheckSparseState(param, Input(2), "m2", kRowWise);
    const int64_t block = param.size_from_dim(1);
    const std::vector<int64_t> rows = SparseRows(Input(3), param.dim(0));
    CheckSparseGrad(grad, static_cast<int64_t>(rows.size()), block);
    const float step = StepSize(5, 6);
    float* p = OutputLike(0);
    float* m1 = OutputLike(1);
    float* m2 = OutputLike(2);
    const float* g = grad.data<float>();
    for (size_t r = 0; r < rows.size(); ++r) {
      const int64_t off = rows[r] * block;
      const float* gr = g + r * block;
      if (kRowWise) {
        double sq = 0;
        for (int64_t j = 0; j < block; ++j) sq += static_cast<double>(gr[j]) * gr[j];
        const float mean_sq = block > 0 ? static_cast<float>(sq / block) : 0.f;
        float& v = m2[rows[r]];
        v = beta2_ * v + (1 - beta2_) * mean_sq;
        const float denom = std::sqrt(v) + epsilon_;
        for (int64_t j = 0; j < block; ++j) {
          m1[off + j] = beta1_ * m1[off + j] + (1 - beta1_) * gr[j];
          p[off + j] += step * m1[off + j] / denom;
        }
      } else {
        for (int64_t j = 0; j < block; ++j) {
          const int64_t i = off + j;
          m1[i] = beta1_ * m1[i] + (1 - beta1_) * gr[j];
          m2[i] = beta2_ * m2[i] + (1 - beta2_) * gr[j] * gr[j];
          p[i] += step * m1[i] / (std::sqrt(m2[i]) + epsilon_);
        }
      }
    }
    return true;
  }
};

}  // namespace

REGISTER_CPU_OPERATOR(Adam, AdamOp);
OPERATOR_SCHEMA(Adam)
    .NumInputs(6)
    .NumOutputs(3)
    .AllowInplace({{0, 0}, {1, 1}, {2, 2}})
    .Arg("beta1", "Decay of the first moment (0.9)")
    .Arg("beta2", "Decay of the second moment (0.999)")
    .Arg("epsilon", "Added to the denominator (1e-5)")
    .SetDoc(
        "Adam step: [param, moment_1, moment_2, grad, lr, iter] -> [param, moment_1, moment_2].");
REGISTER_GRADIENT(Adam, ShouldNotDoGradient);

REGISTER_CPU_OPERATOR(SparseAdam, SparseAdamOp<false>);
OPERATOR_SCHEMA(SparseAdam)
    .NumInputs(7)
    .NumOutputs(3)
    .EnforceInplace({{0, 0}, {1, 1}, {2, 2}})
    .Arg("beta1", "Decay of the first moment (0.9)")
    .Arg("beta2", "Decay of the second moment (0.999)")
    .Arg("epsilon", "Added to the denominator (1e-5)")
    .SetDoc(
        "Adam step on the rows named by indices: "
        "[param, moment_1, moment_2, indices, grad, lr, iter] -> [param, moment_1, moment_2].");
REGISTER_GRADIENT(SparseAdam, ShouldNotDoGradient);

REGISTER_CPU_OPERATOR(RowWiseSparseAdam, SparseAdamOp<true>);
OPERATOR_SCHEMA(RowWiseSparseAdam)
    .NumInputs(7)
    .NumOutputs(3)
    .EnforceInplace({{0, 0}, {1, 1}, {2, 2}})
    .Arg("beta1", "Decay of the first moment (0.9)")
    .Arg("beta2", "Decay of the second moment (0.999)")
    .Arg("epsilon", "Added to the denominator (1e-5)")
    .SetDoc("SparseAdam with one second moment per row (the mean of g^2 over the row).");
REGISTER_GRADIENT(RowWiseSparseAdam, ShouldNotDoGradient);

}  // namespace caffe2
