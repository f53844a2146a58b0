// CrossEntropy: [X (N, D) probabilities, label (N, D) float] -> [Y (N)] (spec ops §1.2.6),
// Y_i = -sum_j label_ij * log(max(X_ij, 1e-20)). A 1-d X is one row.
// CrossEntropyGradient: [X, label, dY] -> [dX], dX_ij = -dY_i * label_ij / max(X_ij, 1e-20).
#include <algorithm>
#include <cmath>

#include "core/gradient.h"
#include "core/operator.h"
#include "operators/loss/cross_entropy_op.h"

namespace caffe2 {
namespace {

constexpr float kLogThreshold = 1e-20f;

using Rows = CrossEntropyShape;

Rows CheckInputs(const Tensor& X, const Tensor& L) { return CheckCrossEntropyInputs(X, L); }

class CrossEntropyOp final : public Operator<CPUContext> {
 public:
  using Operator<CPUContext>::Operator;
  bool RunOnDevice() override {
    const Tensor& X = Input(0);
    const Tensor& L = Input(1);
    const Rows r = CheckInputs(X, L);
    Tensor* Y = Output(0);
    Y->Resize(r.N);
    const float* x = X.data<float>();
    const float* l = L.data<float>();
    float* y = Y->mutable_data<float>();
    for (int64_t i = 0; i < r.N; ++i) {
      double sum = 0;
      for (int64_t j = 0; j < r.D; ++j)
        sum -= l[i * r.D + j] * std::log(std::max(x[i * r.D + j], kLogThreshold));
      y[i] = static_cast<float>(sum);
    }
    return true;
  }
};

class CrossEntropyGradientOp final : public Operator<CPUContext> {
 public:
  using Operator<CPUContext>::Operator;
  bool RunOnDevice() override {
    const Tensor& X = Input(0);
    const Tensor& L = Input(1);
    const Tensor& dY = Input(2);
    const Rows r = CheckInputs(X, L);
    CheckCrossEntropyGradient(dY, r);
    Tensor* dX = Output(0);
    dX->ResizeLike(X);
    const float* x = X.data<float>();
    const float* l = L.data<float>();
    const float* dy = dY.data<float>();
    float* dx = dX->mutable_data<float>();
    for (int64_t i = 0; i < r.N; ++i) {
      for (int64_t j = 0; j < r.D; ++j) {
        const int64_t k = i * r.D + j;
        dx[k] = -dy[i] * l[k] / std::max(x[k], kLogThreshold);
      }
    }
    return true;
  }
};

class GetCrossEntropyGradient final : public GradientMakerBase {
  using GradientMakerBase::GradientMakerBase;
  std::vector<OperatorDef> GetGradientDefs() override {
    return SingleGradientDef("CrossEntropyGradient", "", {I(0), I(1), GO(0)}, {GI(0)});
  }
};

}  // namespace

REGISTER_CPU_OPERATOR(CrossEntropy, CrossEntropyOp);
OPERATOR_SCHEMA(CrossEntropy)
    .NumInputs(2)
    .NumOutputs(1)
    .TensorInference([](const OperatorDef&, const std::vector<TensorShape>& in) {
      TensorShape y;
      y.set_data_type(TensorProto::FLOAT);
      y.add_dims(in.at(0).dims_size() == 2 ? in[0].dims(0) : 1);
      return std::vector<TensorShape>{y};
    })
    .SetDoc("Cross-entropy of probabilities X against soft labels, one value per row.")
    .Input(0, "X", "Probabilities (N, D)")
    .Input(1, "label", "Target distributions (N, D)")
    .Output(0, "Y", "Cross-entropy per row (N)");
REGISTER_GRADIENT(CrossEntropy, GetCrossEntropyGradient);
REGISTER_CPU_OPERATOR(CrossEntropyGradient, CrossEntropyGradientOp);
OPERATOR_SCHEMA(CrossEntropyGradient).NumInputs(3).NumOutputs(1);

}  // namespace caffe2
