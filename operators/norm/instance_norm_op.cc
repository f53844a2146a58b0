// InstanceNorm: [X, scale (C), bias (C)] -> [Y, mean?, inv_std?] (1 to 3 outputs; spec ops §1.3).
// Every (n, c) plane is normalized over its spatial values: Y = (X - mean_nc) * inv_std_nc *
// scale_c + bias_c, with the biased variance and inv_std = 1 / sqrt(var + epsilon). mean and
// inv_std are (N, C). Args epsilon (1e-5), order (NCHW default, or NHWC); X has rank 3 to 5. Y may
// overwrite X. InstanceNormGradient: [X, scale, bias, dY, (mean, inv_std)] -> [dX, dscale, dbias]
// (the statistics are recomputed when not given). With xhat = (X - mean) * inv_std and S the
// spatial size: dbias_c = sum dY, dscale_c = sum xhat * dY,
// dX = scale_c * inv_std / S * (S * dY - sum_s dY - xhat * sum_s(dY * xhat)) per plane.
#include <cmath>
#include <vector>

#include "core/gradient.h"
#include "core/operator.h"
#include "operators/norm/norm_op_checks.h"

namespace caffe2 {
namespace {

class InstanceNormBase : public Operator<CPUContext> {
 public:
  InstanceNormBase(const OperatorDef& def, Workspace* ws)
      : Operator<CPUContext>(def, ws),
        epsilon_(GetSingleArgument<float>("epsilon", 1e-5f)),
        order_(GetSingleArgument<std::string>("order", "NCHW")) {
    ParseOrderIsNCHW(order_);
    CheckNormEpsilon(epsilon_);
  }

 protected:
  // Index of spatial element s of plane (n, c).
  static int64_t Index(const ChannelLayout& l, int64_t n, int64_t c, int64_t s) {
    return l.nchw ? (n * l.C + c) * l.S + s : (n * l.S + s) * l.C + c;
  }
  void Moments(const float* x, const ChannelLayout& l, float* mean, float* inv_std) const {
    for (int64_t n = 0; n < l.N; ++n)
      for (int64_t c = 0; c < l.C; ++c) {
        double sum = 0, sumsq = 0;
        for (int64_t s = 0; s < l.S; ++s) {
          const double v = x[Index(l, n, c, s)];
          sum += v;
          sumsq += v * v;
        }
        const double m = l.S > 0 ? sum / l.S : 0.0;
        const double var = l.S > 0 ? std::max(0.0, sumsq / l.S - m * m) : 0.0;
        mean[n * l.C + c] = static_cast<float>(m);
        inv_std[n * l.C + c] = static_cast<float>(1.0 / std::sqrt(var + epsilon_));
      }
  }

  float epsilon_;
  std::string order_;
};

class InstanceNormOp final : public InstanceNormBase {
 public:
  using InstanceNormBase::InstanceNormBase;
  bool RunOnDevice() override {
    const Tensor& X = Input(0);
    const ChannelLayout l = CheckInstanceNormInputs(*this, X, order_);
    std::vector<float> mean(l.N * l.C), inv_std(l.N * l.C);
    Moments(X.data<float>(), l, mean.data(), inv_std.data());
    const float* scale = Input(1).data<float>();
    const float* bias = Input(2).data<float>();
    Tensor* Y = Output(0);
    Y->ResizeLike(X);
    const float* x = X.data<float>();
    float* y = Y->mutable_data<float>();
    for (int64_t n = 0; n < l.N; ++n)
      for (int64_t c = 0; c < l.C; ++c) {
        const float a = inv_std[n * l.C + c] * scale[c];
        const float b = bias[c] - mean[n * l.C + c] * a;
        for (int64_t s = 0; s < l.S; ++s) {
          const int64_t i = Index(l, n, c, s);
          y[i] = x[i] * a + b;
        }
      }
    for (int k = 1; k < OutputSize(); ++k) {
      Tensor* out = Output(k);
      out->Resize(l.N, l.C);
      const std::vector<float>& src = k == 1 ? mean : inv_std;
      std::copy(src.begin(), src.end(), out->mutable_data<float>());
    }
    return true;
  }
};

class InstanceNormGradientOp final : public InstanceNormBase {
 public:
  using InstanceNormBase::InstanceNormBase;
  bool RunOnDevice() override {
    const Tensor& X = Input(0);
    const Tensor& dY = Input(3);
    const ChannelLayout l = CheckInstanceNormGradientInputs(*this, order_);
    std::vector<float> mean(l.N * l.C), inv_std(l.N * l.C);
    if (InputSize() == 6) {
      std::copy(Input(4).data<float>(), Input(4).data<float>() + l.N * l.C, mean.begin());
      std::copy(Input(5).data<float>(), Input(5).data<float>() + l.N * l.C, inv_std.begin());
    } else {
      Moments(X.data<float>(), l, mean.data(), inv_std.data());
    }
    const float* x = X.data<float>();
    const float* dy = dY.data<float>();
    const float* scale = Input(1).data<float>();
    Tensor* dX = Output(0);
    dX->ResizeLike(X);
    float* dx = dX->mutable_data<float>();
    std::vector<double> dscale(l.C, 0.0), dbias(l.C, 0.0);
    for (int64_t n = 0; n < l.N; ++n)
      for (int64_t c = 0; c < l.C; ++c) {
        const float m = mean[n * l.C + c], is = inv_std[n * l.C + c];
        double sdy = 0, sdyx = 0;
        for (int64_t s = 0; s < l.S; ++s) {
          const int64_t i = Index(l, n, c, s);
          sdy += dy[i];
          sdyx += dy[i] * (x[i] - m) * is;
        }
        dbias[c] += sdy;
        dscale[c] += sdyx;
        const float k = scale[c] * is / static_cast<float>(l.S);
        for (int64_t s = 0; s < l.S; ++s) {
          const int64_t i = Index(l, n, c, s);
          const float xhat = (x[i] - m) * is;
          dx[i] = k * (l.S * dy[i] - static_cast<float>(sdy) - xhat * static_cast<float>(sdyx));
        }
      }
    for (int k = 1; k <= 2; ++k) {
      Tensor* out = Output(k);
      out->Resize(l.C);
      const std::vector<double>& src = k == 1 ? dscale : dbias;
      float* o = out->mutable_data<float>();
      for (int64_t c = 0; c < l.C; ++c) o[c] = static_cast<float>(src[c]);
    }
    return true;
  }
};

class GetInstanceNormGradient final : public GradientMakerBase {
  using GradientMakerBase::GradientMakerBase;
  std::vector<OperatorDef> GetGradientDefs() override {
    std::vector<std::string> inputs{I(0), I(1), I(2), GO(0)};
    if (Def().output_size() == 3) {
      inputs.push_back(O(1));
      inputs.push_back(O(2));
    }
    return SingleGradientDef("InstanceNormGradient", "", inputs, {GI(0), GI(1), GI(2)});
  }
};

}  // namespace

REGISTER_CPU_OPERATOR(InstanceNorm, InstanceNormOp);
OPERATOR_SCHEMA(InstanceNorm)
    .NumInputs(3)
    .NumOutputs(1, 3)
    .AllowInplace({{0, 0}})
    .TensorInference([](const OperatorDef& def, const std::vector<TensorShape>& in) {
      std::vector<TensorShape> out{in.at(0)};
      if (def.output_size() > 1) {
        const bool nchw =
            ArgumentHelper(def).GetSingleArgument<std::string>("order", "NCHW") != "NHWC";
        TensorShape s;
        s.set_data_type(TensorProto::FLOAT);
        s.add_dims(in[0].dims(0));
        s.add_dims(in[0].dims(nchw ? 1 : in[0].dims_size() - 1));
        out.resize(def.output_size(), s);
      }
      return out;
    })
    .Arg("epsilon", "added to the variance (default 1e-5)")
    .Arg("order", "NCHW (default) or NHWC")
    .SetDoc(
        "Instance normalization: each (sample, channel) plane normalized over its spatial values.")
    .Input(0, "X", "Input (N, C, spatial...)")
    .Input(1, "scale", "Per-channel scale (C)")
    .Input(2, "bias", "Per-channel bias (C)")
    .Output(0, "Y", "Output, shaped like X")
    .Output(1, "mean", "Optional plane means (N, C)")
    .Output(2, "inv_std", "Optional plane 1/sqrt(var + epsilon) (N, C)");
REGISTER_GRADIENT(InstanceNorm, GetInstanceNormGradient);
REGISTER_CPU_OPERATOR(InstanceNormGradient, InstanceNormGradientOp);
OPERATOR_SCHEMA(InstanceNormGradient)
    .NumInputs({4, 6})
    .NumOutputs(3)
    .SetDoc(
        "The gradient of InstanceNorm: [X, scale, bias, dY, (mean, inv_std)] -> "
        "[dX, dscale, dbias].")
    .Arg("epsilon", "(float, default 1e-5) the forward op's epsilon, added to the variance")
    .Arg("order", "(string, default \"NCHW\") layout of X and dY: \"NCHW\" or \"NHWC\"");

}  // namespace caffe2
