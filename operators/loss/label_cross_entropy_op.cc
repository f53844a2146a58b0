// LabelCrossEntropy: [X (N, D) probabilities, label (N or (N, 1)) int32] -> [Y (N)],
// Y_i = -log(max(X_i[l_i], 1e-20)) (spec ops §1.2.6). A 1-d X is one row.
// LabelCrossEntropyGradient: [X, label, dY] -> [dX], dX_i[l_i] = -dY_i / max(X_i[l_i], 1e-20), else
// 0.
#include <algorithm>
#include <cmath>

#include "core/gradient.h"
#include "core/operator.h"
#include "operators/loss/label_cross_entropy_op.h"

namespace caffe2 {
namespace {

constexpr float kLogThreshold = 1e-20f;

using Rows = LabelCrossEntropyShape;

Rows CheckInputs(const Tensor& X, const Tensor& L) { return CheckLabelCrossEntropyInputs(X, L); }

class LabelCrossEntropyOp final : public Operator<CPUContext> {
 public:
  using Operator<CPUContext>::Operator;
  bool RunOnDevice() override {
    const Tensor& X = Input(0);
    const Tensor& L = Input(1);
    const Rows r = CheckInputs(X, L);
    Tensor* Y = Output(0);
    Y->Resize(r.N);
    const float* x = X.data<float>();
    const int* l = L.data<int>();
    float* y = Y->mutable_data<float>();
    for (int64_t i = 0; i < r.N; ++i) y[i] = -std::log(std::max(x[i * r.D + l[i]], kLogThreshold));
    return true;
  }
};

class LabelCrossEntropyGradientOp final : public Operator<CPUContext> {
 public:
  using Operator<CPUContext>::Operator;
  bool RunOnDevice() override {
    const Tensor& X = Input(0);
    const Tensor& L = Input(1);
    const Tensor& dY = Input(2);
    const Rows r = CheckInputs(X, L);
    CheckLabelCrossEntropyGradient(dY, r);
    Tensor* dX = Output(0);
    dX->ResizeLike(X);
    const float* x = X.data<float>();
    const int* l = L.data<int>();
    const float* dy = dY.data<float>();
    float* dx = dX->mutable_data<float>();
    std::fill(dx, dx + dX->numel(), 0.0f);
    for (int64_t i = 0; i < r.N; ++i) {
      const int64_t k = i * r.D + l[i];
      dx[k] = -dy[i] / std::max(x[k], kLogThreshold);
    }
    return true;
  }
};

class GetLabelCrossEntropyGradient final : public GradientMakerBase {
  using GradientMakerBase::GradientMakerBase;
  std::vector<OperatorDef> GetGradientDefs() override {
    return SingleGradientDef("LabelCrossEntropyGradient", "", {I(0), I(1), GO(0)}, {GI(0)});
  }
};

}  // namespace

REGISTER_CPU_OPERATOR(LabelCrossEntropy, LabelCrossEntropyOp);
OPERATOR_SCHEMA(LabelCrossEntropy)
    .NumInputs(2)
    .NumOutputs(1)
    .TensorInference([](const OperatorDef&, const std::vector<TensorShape>& in) {
      TensorShape y;
      y.set_data_type(TensorProto::FLOAT);
      y.add_dims(in.at(0).dims_size() == 2 ? in[0].dims(0) : 1);
      return std::vector<TensorShape>{y};
    })
    .SetDoc("Cross-entropy of probabilities X against integer labels, one value per row.")
    .Input(0, "X", "Probabilities (N, D)")
    .Input(1, "label", "int32 class ids (N)")
    .Output(0, "Y", "Cross-entropy per row (N)");
REGISTER_GRADIENT(LabelCrossEntropy, GetLabelCrossEntropyGradient);
REGISTER_CPU_OPERATOR(LabelCrossEntropyGradient, LabelCrossEntropyGradientOp);
OPERATOR_SCHEMA(LabelCrossEntropyGradient).NumInputs(3).NumOutputs(1);

}  // namespace caffe2
