// Dropout: [X] -> [Y, mask?] (spec ops §1.2.8). Args ratio (0.5, in [0, 1)), is_test (0).
// Training: keep ~ Bernoulli(1 - ratio) from the op's CPUContext generator (seeded by
// DeviceOption.random_seed); Y = X * keep / (1 - ratio); mask (bool, shaped like X) = keep.
// Test: Y = X; the mask is not written. Y may overwrite X.
// DropoutGrad (not DropoutGradient): training [dY, mask] -> [dX] = dY * mask / (1 - ratio);
// test [dY] -> [dX] = dY. dX may overwrite dY.
#include <algorithm>
#include <random>

#include "core/gradient.h"
#include "core/operator.h"
#include "operators/nn/dropout_op.h"

namespace caffe2 {
namespace {

class DropoutBase : public Operator<CPUContext> {
 public:
  DropoutBase(const OperatorDef& def, Workspace* ws)
      : Operator<CPUContext>(def, ws), args_(ReadDropoutArgs(*this)) {}

 protected:
  const DropoutArgs args_;
};

class DropoutOp final : public DropoutBase {
 public:
  DropoutOp(const OperatorDef& def, Workspace* ws) : DropoutBase(def, ws) {
    CheckDropoutOutputs(*this, args_);
  }

  bool RunOnDevice() override {
    const Tensor& X = Input(0);
    CheckDropoutInput(X);
    Tensor* Y = Output(0);
    if (args_.is_test) {
      if (Y != &X) Y->CopyFrom(X);
      return true;
    }
    Y->ResizeLike(X);
    Tensor* M = Output(1);
    M->ResizeLike(X);
    const float* x = X.data<float>();
    float* y = Y->mutable_data<float>();
    bool* mask = M->mutable_data<bool>();
    const float scale = 1.0f / (1.0f - args_.ratio);
    std::bernoulli_distribution keep(1.0 - args_.ratio);
    auto& gen = context_.RandGenerator();
    for (int64_t i = 0; i < X.numel(); ++i) {
      mask[i] = keep(gen);
      y[i] = mask[i] ? x[i] * scale : 0.0f;
    }
    return true;
  }
};

class DropoutGradOp final : public DropoutBase {
 public:
  DropoutGradOp(const OperatorDef& def, Workspace* ws) : DropoutBase(def, ws) {
    CheckDropoutGradInputCount(*this, args_);
  }

  bool RunOnDevice() override {
    const Tensor& dY = Input(0);
    Tensor* dX = Output(0);
    if (args_.is_test) {
      if (dX != &dY) dX->CopyFrom(dY);
      return true;
    }
    const Tensor& M = Input(1);
    CheckDropoutGradInputs(dY, M);
    dX->ResizeLike(dY);
    const float* dy = dY.data<float>();
    const bool* mask = M.data<bool>();
    float* dx = dX->mutable_data<float>();
    const float scale = 1.0f / (1.0f - args_.ratio);
    for (int64_t i = 0; i < dY.numel(); ++i) dx[i] = mask[i] ? dy[i] * scale : 0.0f;
    return true;
  }
};

class GetDropoutGradient final : public GradientMakerBase {
  using GradientMakerBase::GradientMakerBase;
  std::vector<OperatorDef> GetGradientDefs() override {
    const bool is_test = ArgumentHelper(Def()).GetSingleArgument<int>("is_test", 0) != 0;
    if (is_test) return SingleGradientDef("DropoutGrad", "", {GO(0)}, {GI(0)});
    return SingleGradientDef("DropoutGrad", "", {GO(0), O(1)}, {GI(0)});
  }
};

}  // namespace

REGISTER_CPU_OPERATOR(Dropout, DropoutOp);
OPERATOR_SCHEMA(Dropout)
    .NumInputs(1)
    .NumOutputs(1, 2)
    .PointwiseCostInference(1)
    .AllowInplace({{0, 0}})
    .TensorInference([](const OperatorDef& def, const std::vector<TensorShape>& in) {
      std::vector<TensorShape> out{in.at(0)};
      if (def.output_size() == 2 && ArgumentHelper(def).GetSingleArgument<int>("is_test", 0) == 0) {
        TensorShape mask = in[0];
        mask.set_data_type(TensorProto::BOOL);
        out.push_back(mask);
      }
      return out;
    })
    .Arg("ratio", "drop probability (default 0.5)")
    .Arg("is_test", "1: identity (default 0)")
    .SetDoc("Randomly zeroes elements with probability ratio and rescales the rest by 1/(1-ratio).")
    .Input(0, "X", "Input")
    .Output(0, "Y", "Output, shaped like X")
    .Output(1, "mask", "bool keep mask (training)");
REGISTER_GRADIENT(Dropout, GetDropoutGradient);
REGISTER_CPU_OPERATOR(DropoutGrad, DropoutGradOp);
OPERATOR_SCHEMA(DropoutGrad)
    .NumInputs(1, 2)
    .NumOutputs(1)
    .AllowInplace({{0, 0}})
    .SetDoc("The gradient of Dropout: dX = dY * mask / (1 - ratio) in training, dY in test mode.")
    .Arg("ratio", "(float, default 0.5) the forward op's drop probability, in [0, 1)")
    .Arg("is_test", "(int, default 0) 1: test mode, inputs [dY]; 0: training, inputs [dY, mask]");

}  // namespace caffe2
