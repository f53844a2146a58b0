// PRelu: [X, slope] -> [Y] (spec ops §1.3), Y = x if x > 0 else slope_c * x, where slope holds one
// value shared by all channels or one per channel. Arg order (NCHW default: channel dim 1; NHWC:
// last). X has rank >= 2 unless slope is shared. Y may overwrite X. PReluGradient: [Y, dY, X,
// slope] -> [dX, dslope], dX = dY where x > 0 else slope_c * dY, dslope_c = sum over x <= 0 of dY *
// x.
#include <string>
#include <vector>

#include "core/gradient.h"
#include "core/operator.h"
#include "operators/nn/prelu_op.h"

namespace caffe2 {
namespace {

class PReluBase : public Operator<CPUContext> {
 public:
  PReluBase(const OperatorDef& def, Workspace* ws)
      : Operator<CPUContext>(def, ws), order_(GetSingleArgument<std::string>("order", "NCHW")) {
    CheckPReluOrder(order_);
  }

 protected:
  PReluLayout Check(const Tensor& X, const Tensor& slope) const {
    return CheckPReluInputs(X, slope, order_ == "NCHW");
  }
  // Channel of element i.
  static int64_t Channel(const PReluLayout& l, int64_t i) {
    return l.C == 1 ? 0 : (i / l.inner) % l.C;
  }

  std::string order_;
};

class PReluOp final : public PReluBase {
 public:
  using PReluBase::PReluBase;
  bool RunOnDevice() override {
    const Tensor& X = Input(0);
    const Tensor& slope = Input(1);
    const PReluLayout l = Check(X, slope);
    Tensor* Y = Output(0);
    Y->ResizeLike(X);
    const float* x = X.data<float>();
    const float* w = slope.data<float>();
    float* y = Y->mutable_data<float>();
    for (int64_t i = 0; i < X.numel(); ++i) y[i] = x[i] > 0 ? x[i] : w[Channel(l, i)] * x[i];
    return true;
  }
};

class PReluGradientOp final : public PReluBase {
 public:
  using PReluBase::PReluBase;
  bool RunOnDevice() override {
    const Tensor& dY = Input(1);
    const Tensor& X = Input(2);
    const Tensor& slope = Input(3);
    const PReluLayout l = Check(X, slope);
    CheckPReluGradient(dY, X);
    Tensor* dX = Output(0);
    Tensor* dS = Output(1);
    dX->ResizeLike(X);
    dS->ResizeLike(slope);
    const float* x = X.data<float>();
    const float* dy = dY.data<float>();
    const float* w = slope.data<float>();
    float* dx = dX->mutable_data<float>();
    std::vector<double> ds(l.C, 0.0);
    for (int64_t i = 0; i < X.numel(); ++i) {
      const int64_t c = Channel(l, i);
      if (x[i] > 0) {
        dx[i] = dy[i];
      } else {
        ds[c] += dy[i] * x[i];
        dx[i] = w[c] * dy[i];
      }
    }
    float* dsp = dS->mutable_data<float>();
    for (int64_t c = 0; c < l.C; ++c) dsp[c] = static_cast<float>(ds[c]);
    return true;
  }
};

class GetPReluGradient final : public GradientMakerBase {
  using GradientMakerBase::GradientMakerBase;
  std::vector<OperatorDef> GetGradientDefs() override {
    return SingleGradientDef("PReluGradient", "", {O(0), GO(0), I(0), I(1)}, {GI(0), GI(1)});
  }
};

}  // namespace

REGISTER_CPU_OPERATOR(PRelu, PReluOp);
OPERATOR_SCHEMA(PRelu)
    .NumInputs(2)
    .NumOutputs(1)
    .AllowInplace({{0, 0}})
    .IdenticalTypeAndShapeOfInput(0)
    .Arg("order", "NCHW (default) or NHWC")
    .SetDoc("Parametric ReLU with a shared or per-channel slope.")
    .Input(0, "X", "Input")
    .Input(1, "slope", "1 or C slopes")
    .Output(0, "Y", "Output, shaped like X");
REGISTER_GRADIENT(PRelu, GetPReluGradient);
REGISTER_CPU_OPERATOR(PReluGradient, PReluGradientOp);
OPERATOR_SCHEMA(PReluGradient)
    .NumInputs(4)
    .NumOutputs(2)
    .SetDoc("The gradient of PRelu: [Y, dY, X, slope] -> [dX, dslope].")
    .Arg("order", "(string, default \"NCHW\") where X's channels are: \"NCHW\" or \"NHWC\"");

}  // namespace caffe2
