// SpatialSoftmaxWithLoss: [logits (N, D, H, W), labels (N, H, W) int32, weights (N, H, W)?]
// -> [softmax (N, D, H, W), loss] (spec ops §1.2.6). The softmax runs over D at every (n, h, w).
// A label of -1 marks a position to ignore; other labels must lie in [0, D).
// loss (0-d) = scale * sum_pos w * -log(max(p[label], 1e-20)) / sum_pos w over the non-ignored
// positions (0 when that weight sum is 0). Arg `order` must be NCHW.
// SpatialSoftmaxWithLossGradient: [logits, labels, weights?, softmax, dLoss] -> [dX],
// dX = (p - onehot(label)) * w * scale * dLoss / sum(w), 0 at ignored positions.
#include <cmath>
#include <string>

#include "core/gradient.h"
#include "core/operator.h"
#include "operators/loss/spatial_softmax_with_loss_op.h"

namespace caffe2 {
namespace {

constexpr int kIgnoreLabel = kSpatialSoftmaxIgnoreLabel;

class SpatialSoftmaxWithLossBase : public Operator<CPUContext> {
 public:
  SpatialSoftmaxWithLossBase(const OperatorDef& def, Workspace* ws)
      : Operator<CPUContext>(def, ws), scale_(ReadSpatialSoftmaxWithLossScale(*this)) {}

 protected:
  void Check(const Tensor& X, const Tensor& T, const Tensor* W) const {
    CheckSpatialSoftmaxWithLossInputs(X, T, W);
  }

  // Sum of the weights of the non-ignored positions.
  float TotalWeight(const Tensor& T, const Tensor* W) const {
    double total = 0;
    for (int64_t i = 0; i < T.numel(); ++i) {
      if (T.data<int>()[i] != kIgnoreLabel) total += W ? W->data<float>()[i] : 1.0f;
    }
    return static_cast<float>(total);
  }

  float scale_;
};

class SpatialSoftmaxWithLossOp final : public SpatialSoftmaxWithLossBase {
 public:
  using SpatialSoftmaxWithLossBase::SpatialSoftmaxWithLossBase;

  bool RunOnDevice() override {
    const Tensor& X = Input(0);
    const Tensor& T = Input(1);
    const Tensor* W = InputSize() > 2 ? &Input(2) : nullptr;
    Check(X, T, W);
    const int64_t N = X.dim(0), D = X.dim(1), HW = X.dim(2) * X.dim(3);
    Tensor* P = Output(0);
    P->ResizeLike(X);
    const float* x = X.data<float>();
    float* p = P->mutable_data<float>();
    const int* t = T.data<int>();
    double loss = 0;
    for (int64_t n = 0; n < N; ++n) {
      for (int64_t k = 0; k < HW; ++k) {
        const float* xs = x + n * D * HW + k;
        float* ps = p + n * D * HW + k;
        float m = xs[0];
        for (int64_t d = 1; d < D; ++d) m = std::max(m, xs[d * HW]);
        float sum = 0;
        for (int64_t d = 0; d < D; ++d) sum += (ps[d * HW] = std::exp(xs[d * HW] - m));
        for (int64_t d = 0; d < D; ++d) ps[d * HW] /= sum;
        const int label = t[n * HW + k];
        if (label != kIgnoreLabel) {
          const float w = W ? W->data<float>()[n * HW + k] : 1.0f;
          loss -= w * std::log(std::max(ps[label * HW], 1e-20f));
        }
      }
    }
    const float total = TotalWeight(T, W);
    Tensor* L = Output(1);
    L->Resize(std::vector<int64_t>{});
    L->mutable_data<float>()[0] = total != 0 ? static_cast<float>(scale_ * loss / total) : 0.0f;
    return true;
  }
};

class SpatialSoftmaxWithLossGradientOp final : public SpatialSoftmaxWithLossBase {
 public:
  using SpatialSoftmaxWithLossBase::SpatialSoftmaxWithLossBase;

  bool RunOnDevice() override {
    const bool weighted = InputSize() == 5;
    const Tensor& X = Input(0);
    const Tensor& T = Input(1);
    const Tensor* W = weighted ? &Input(2) : nullptr;
    const Tensor& P = Input(weighted ? 3 : 2);
    const Tensor& dLoss = Input(weighted ? 4 : 3);
    Check(X, T, W);
    CheckSpatialSoftmaxWithLossGradientInputs(X, P, dLoss);
    const int64_t N = X.dim(0), D = X.dim(1), HW = X.dim(2) * X.dim(3);
    const float total = TotalWeight(T, W);
    const float g = total != 0 ? scale_ * dLoss.data<float>()[0] / total : 0.0f;
    Tensor* dX = Output(0);
    dX->ResizeLike(X);
    const float* p = P.data<float>();
    float* dx = dX->mutable_data<float>();
    const int* t = T.data<int>();
    for (int64_t n = 0; n < N; ++n) {
      for (int64_t k = 0; k < HW; ++k) {
        const int label = t[n * HW + k];
        const float wg =
            label == kIgnoreLabel ? 0.0f : (W ? W->data<float>()[n * HW + k] : 1.0f) * g;
        for (int64_t d = 0; d < D; ++d) {
          const int64_t idx = (n * D + d) * HW + k;
          dx[idx] = (p[idx] - (d == label ? 1.0f : 0.0f)) * wg;
        }
      }
    }
    return true;
  }
};

class GetSpatialSoftmaxWithLossGradient final : public GradientMakerBase {
  using GradientMakerBase::GradientMakerBase;
  std::vector<OperatorDef> GetGradientDefs() override {
    std::vector<std::string> inputs{I(0), I(1)};
    if (Def().input_size() == 3) inputs.push_back(I(2));
    inputs.push_back(O(0));
    inputs.push_back(GO(1));
    return SingleGradientDef("SpatialSoftmaxWithLossGradient", "", inputs, {GI(0)});
  }
};

}  // namespace

REGISTER_CPU_OPERATOR(SpatialSoftmaxWithLoss, SpatialSoftmaxWithLossOp);
OPERATOR_SCHEMA(SpatialSoftmaxWithLoss)
    .NumInputs(2, 3)
    .NumOutputs(2)
    .TensorInference([](const OperatorDef&, const std::vector<TensorShape>& in) {
      TensorShape p = in.at(0);
      p.set_data_type(TensorProto::FLOAT);
      TensorShape loss;
      loss.set_data_type(TensorProto::FLOAT);
      return std::vector<TensorShape>{p, loss};
    })
    .Arg("scale", "loss multiplier (default 1.0)")
    .Arg("order", "must be NCHW")
    .SetDoc(
        "Per-position softmax over channels and the cross-entropy averaged over labelled "
        "positions.")
    .Input(0, "logits", "Scores (N, D, H, W)")
    .Input(1, "labels", "int32 (N, H, W); -1 ignores a position")
    .Input(2, "weights", "Optional float (N, H, W)")
    .Output(0, "softmax", "Softmax over D, (N, D, H, W)")
    .Output(1, "loss", "Scalar loss");
REGISTER_GRADIENT(SpatialSoftmaxWithLoss, GetSpatialSoftmaxWithLossGradient);
REGISTER_CPU_OPERATOR(SpatialSoftmaxWithLossGradient, SpatialSoftmaxWithLossGradientOp);
OPERATOR_SCHEMA(SpatialSoftmaxWithLossGradient)
    .NumInputs(4, 5)
    .NumOutputs(1)
    .SetDoc(
        "The gradient of SpatialSoftmaxWithLoss: [logits, labels, weights?, softmax, dloss] "
        "-> [dlogits].")
    .Arg("scale", "(float, default 1.0) the forward op's loss multiplier")
    .Arg("order", "(string, default \"NCHW\") only \"NCHW\" is supported");

}  // namespace caffe2
