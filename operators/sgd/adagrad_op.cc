// Adagrad (spec ops §1.3):  h' = decay*h + g^2;  param' = param + lr * g / (sqrt(h') + epsilon)
// (lr is already negative). Args epsilon (1e-5), decay (1.0).
// Adagrad:              [param, moment, grad, lr] -> [param, moment], allow {0->0, 1->1}
// SparseAdagrad:        [param, moment, indices, grad, lr] -> [param, moment], enforce {0->0,
// 1->1};
//                       grad holds one param row per index.
// RowWiseSparseAdagrad: as SparseAdagrad, but moment has one value per row (shape [rows]),
//                       h'[r] = decay*h[r] + mean over the row of g^2.
// All SHOULD_NOT_DO_GRADIENT.
#include <cmath>

#include "core/gradient.h"
#include "operators/sgd/sgd_util.h"

namespace caffe2 {
namespace {

class AdagradBase : public Operator<CPUContext> {
 public:
  AdagradBase(const OperatorDef& def, Workspace* ws)
      : Operator<CPUContext>(def, ws),
        epsilon_(GetSingleArgument<float>("epsilon", 1e-5f)),
        decay_(GetSingleArgument<float>("decay", 1.0f)) {}

 protected:
  float* OutputLike(int i) {
    const Tensor& in = Input(i);
    CheckFloat(in, i == 0 ? "param" : "moment");
    Tensor* out = Output(i);
    if (!IsInputOutputAlias(i, i)) out->CopyFrom(in);
    return out->mutable_data<float>();
  }
  float epsilon_, decay_;
};

class AdagradOp final : public AdagradBase {
 public:
  using AdagradBase::AdagradBase;
  bool RunOnDevice() override {
    const Tensor& grad = Input(2);
    CheckFloat(grad, "grad");
    CheckSameShape(Input(0), "param", grad, "grad");
    CheckSameShape(Input(1), "moment", grad, "grad");
    const float lr = LearningRateValue(Input(3));
    float* p = OutputLike(0);
    float* h = OutputLike(1);
    const float* g = grad.data<float>();
    for (int64_t i = 0; i < grad.numel(); ++i) {
      h[i] = decay_ * h[i] + g[i] * g[i];
      p[i] += lr * g[i] / (std::sqrt(h[i]) + epsilon_);
    }
    return true;
  }
};

template <bool kRowWise>
class SparseAdagradOp final : public AdagradBase {
 public:
  using AdagradBase::AdagradBase;
  bool RunOnDevice() override {
    const Tensor& param = Input(0);
    const Tensor& grad = Input(3);
    CheckFloat(grad, "grad");
    CheckSparseState(param, Input(1), "moment", kRowWise);
    const int64_t block = param.size_from_dim(1);
    const std::vector<int64_t> rows = SparseRows(Input(2), param.dim(0));
    CheckSparseGrad(grad, static_cast<int64_t>(rows.size()), block);
    const float lr = LearningRateValue(Input(4));
    float* p = OutputLike(0);
    float* h = OutputLike(1);
    const float* g = grad.data<float>();
    for (size_t r = 0; r < rows.size(); ++r) {
      const int64_t off = rows[r] * block;
      const float* gr = g + r * block;
      if (kRowWise) {
        double sq = 0;
        for (int64_t j = 0; j < block; ++j) sq += static_cast<double>(gr[j]) * gr[j];
        float& hr = h[rows[r]];
        hr = decay_ * hr + (block > 0 ? static_cast<float>(sq / block) : 0.f);
        const float denom = std::sqrt(hr) + epsilon_;
        for (int64_t j = 0; j < block; ++j) p[off + j] += lr * gr[j] / denom;
      } else {
        for (int64_t j = 0; j < block; ++j) {
          const int64_t i = off + j;
          h[i] = decay_ * h[i] + gr[j] * gr[j];
          p[i] += lr * gr[j] / (std::sqrt(h[i]) + epsilon_);
        }
      }
    }
    return true;
  }
};

}  // namespace

REGISTER_CPU_OPERATOR(Adagrad, AdagradOp);
OPERATOR_SCHEMA(Adagrad)
    .NumInputs(4)
    .NumOutputs(2)
    .AllowInplace({{0, 0}, {1, 1}})
    .Arg("epsilon", "Added to the denominator (1e-5)")
    .Arg("decay", "Decay of the squared-gradient sum (1.0)")
    .SetDoc("Adagrad step: [param, moment, grad, lr] -> [param, moment].");
REGISTER_GRADIENT(Adagrad, ShouldNotDoGradient);

REGISTER_CPU_OPERATOR(SparseAdagrad, SparseAdagradOp<false>);
OPERATOR_SCHEMA(SparseAdagrad)
    .NumInputs(5)
    .NumOutputs(2)
    .EnforceInplace({{0, 0}, {1, 1}})
    .Arg("epsilon", "Added to the denominator (1e-5)")
    .Arg("decay", "Decay of the squared-gradient sum (1.0)")
    .SetDoc(
        "Adagrad step on the rows named by indices: [param, moment, indices, grad, lr] -> [param, "
        "moment].");
REGISTER_GRADIENT(SparseAdagrad, ShouldNotDoGradient);

REGISTER_CPU_OPERATOR(RowWiseSparseAdagrad, SparseAdagradOp<true>);
OPERATOR_SCHEMA(RowWiseSparseAdagrad)
    .NumInputs(5)
    .NumOutputs(2)
    .EnforceInplace({{0, 0}, {1, 1}})
    .Arg("epsilon", "Added to the denominator (1e-5)")
    .Arg("decay", "Decay of the squared-gradient sum (1.0)")
    .SetDoc("SparseAdagrad with one moment per row (the mean of g^2 over the row).");
REGISTER_GRADIENT(RowWiseSparseAdagrad, ShouldNotDoGradient);

}  // namespace caffe2
