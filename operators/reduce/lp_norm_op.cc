// LpNorm: [X float] -> [Z (1) float], Z = sum |x| for p = 1 and sum x^2 for p = 2 (the square of
// the 2-norm, as upstream: callers take Pow 0.5 for the norm), divided by X.numel() when
// `average` (default 0). p (int, default 2) must be 1 or 2.
// LpNormGradient: [X, dZ] -> [dX], dX = dZ sign(x) (0 within 1e-12 of 0) for p = 1 and 2 x dZ for
// p = 2, divided by X.numel() when `average`.
#include <cmath>

#include "core/gpu_fallback_declarations.h"
#include "core/gradient.h"
#include "core/operator.h"
#include "operators/common/input_checks.h"

namespace caffe2 {
namespace {

struct LpNormArgs {
  int p;
  bool average;
};

LpNormArgs ReadLpNormArgs(const OperatorBase& op) {
  LpNormArgs a{op.GetSingleArgument<int>("p", 2), op.GetSingleArgument<bool>("average", false)};
  C2_ENFORCE(a.p == 1 || a.p == 2, "p must be 1 or 2, got ", a.p);
  return a;
}

class LpNormOp final : public Operator<CPUContext> {
 public:
  LpNormOp(const OperatorDef& def, Workspace* ws)
      : Operator<CPUContext>(def, ws), args_(ReadLpNormArgs(*this)) {}
  bool RunOnDevice() override {
    const Tensor& X = Input(0);
    CheckFloat(X, "X");
    const float* x = X.data<float>();
    double sum = 0;
    for (int64_t i = 0; i < X.numel(); ++i)
      sum += args_.p == 1 ? std::fabs(x[i]) : double(x[i]) * x[i];
    if (args_.average && X.numel() > 0) sum /= static_cast<double>(X.numel());
    Tensor* Z = Output(0);
    Z->Resize(1);
    Z->mutable_data<float>()[0] = static_cast<float>(sum);
    return true;
  }

 private:
  LpNormArgs args_;
};

class LpNormGradientOp final : public Operator<CPUContext> {
 public:
  LpNormGradientOp(const OperatorDef& def, Workspace* ws)
      : Operator<CPUContext>(def, ws), args_(ReadLpNormArgs(*this)) {}
  bool RunOnDevice() override {
    const Tensor& X = Input(0);
    const Tensor& dZ = Input(1);
    CheckFloat(X, "X");
    C2_ENFORCE(dZ.IsType<float>() && dZ.numel() == 1, "dZ must be a one-element float tensor, got ",
               dZ.DebugString());
    float g = dZ.data<float>()[0];
    if (args_.average && X.numel() > 0) g /= static_cast<float>(X.numel());
    Tensor* dX = Output(0);
    dX->ResizeLike(X);
    const float* x = X.data<float>();
    float* dx = dX->mutable_data<float>();
    constexpr float kEps = 1e-12f;
    for (int64_t i = 0; i < X.numel(); ++i) {
      if (args_.p == 2) {
        dx[i] = 2.f * x[i] * g;
      } else {
        dx[i] = x[i] > kEps ? g : (x[i] < -kEps ? -g : 0.f);
      }
    }
    return true;
  }

 private:
  LpNormArgs args_;
};

class GetLpNormGradient final : public GradientMakerBase {
  using GradientMakerBase::GradientMakerBase;
  std::vector<OperatorDef> GetGradientDefs() override {
    return SingleGradientDef("LpNormGradient", "", {I(0), GO(0)}, {GI(0)});
  }
};

}  // namespace

REGISTER_CPU_OPERATOR(LpNorm, LpNormOp);
REGISTER_GPU_FALLBACK(LpNorm);  // CUDA runs the CPU kernel
OPERATOR_SCHEMA(LpNorm)
    .NumInputs(1)
    .NumOutputs(1)
    .TensorInference([](const OperatorDef&, const std::vector<TensorShape>&) {
      TensorShape z;
      z.set_data_type(TensorProto::FLOAT);
      z.add_dims(1);
      return std::vector<TensorShape>{z};
    })
    .Arg("p", "1 (sum of |x|) or 2 (sum of x^2), default 2")
    .Arg("average", "1: divide by the number of elements (default 0)")
    .Input(0, "X", "float tensor")
    .Output(0, "Z", "(1) float: the sum of |x|^p (not its p-th root)")
    .SetDoc("The L1 norm or the squared L2 norm of a tensor.");
REGISTER_GRADIENT(LpNorm, GetLpNormGradient);
REGISTER_CPU_OPERATOR(LpNormGradient, LpNormGradientOp);
REGISTER_GPU_FALLBACK(LpNormGradient);  // CUDA runs the CPU kernel
OPERATOR_SCHEMA(LpNormGradient)
    .NumInputs(2)
    .NumOutputs(1)
    .IdenticalTypeAndShapeOfInput(0)
    .SetDoc("The gradient of LpNorm: [X, dZ] -> [dX].")
    .Arg("p", "(int, default 2) the forward op's p: 1 or 2")
    .Arg("average", "(bool, default 0) the forward op's average");

}  // namespace caffe2
