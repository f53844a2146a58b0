// YellowFin (Zhang and Mitliagkas, "YellowFin and the Art of Momentum Tuning", 2017): momentum SGD
// whose learning rate and momentum are tuned on line from the gradients. Per run, with g the
// gradient and every average an exponential moving average with factor beta (divided by
// 1 - beta^(t + 1) when zero_debias, t = iter):
//   curvature  h = |g|^2, kept for the last curv_win_width runs in curv_win; h_max, h_min: the
//              averages of the window's max and min;
//   variance   C = sum(avg(g^2) - avg(g)^2)  (g_avg, g2_avg per element);
//   distance   D = avg(|g|) / avg(h);
//   tuning     sqrt(mu) = 1 + y with y the real root of y^3 + p y + p = 0, p = D^2 h_min^2 / (2 C)
//              (the optimum of the one-step model), raised so that sqrt(mu) is at least
//              (sqrt(h_max / h_min) - 1) / (sqrt(h_max / h_min) + 1); lr = (1 - sqrt(mu))^2 /
//              h_min;
//   update     lr_avg, mu_avg: the averages of lr and mu (not debiased: they start from the
//              builder's alpha and mu); moment = mu_avg moment + lr_avg g; param -= moment (with
//              nesterov: param -= mu_avg moment + lr_avg g).
// Inputs [param, moment, lr_avg (1), mu_avg (1), curv_win (curv_win_width), g_avg, g2_avg,
// scalars_memory (4: the averages of h_max, h_min, |g| and h), grad, iter (int64, 1)];
// outputs: the first eight, in place. Args curv_win_width (20), beta (0.999), epsilon (1e-6,
// keeps the divisions finite), nesterov (0), zero_debias (1). Float. SHOULD_NOT_DO_GRADIENT.
#include <algorithm>
#include <cmath>

#include "core/gradient.h"
#include "operators/sgd/sgd_util.h"
#include "operators/tensor/tensor_util.h"

namespace caffe2 {
namespace {

enum { kParam, kMoment, kLr, kMu, kCurvWin, kGAvg, kG2Avg, kScalars, kGrad, kIter };
enum { kHMax, kHMin, kGNorm, kH };

// The real root of y^3 + p y + p = 0 for p > 0 (Cardano: one real root).
double CubicRoot(double p) {
  const double q = std::sqrt(p * p / 4 + p * p * p / 27);
  return std::cbrt(-p / 2 + q) + std::cbrt(-p / 2 - q);
}

class YellowFinOp final : public Operator<CPUContext> {
 public:
  YellowFinOp(const OperatorDef& def, Workspace* ws)
      : Operator<CPUContext>(def, ws),
        width_(GetSingleArgument<int>("curv_win_width", 20)),
        beta_(GetSingleArgument<float>("beta", 0.999f)),
        epsilon_(GetSingleArgument<float>("epsilon", 1e-6f)),
        nesterov_(GetSingleArgument<bool>("nesterov", false)),
        zero_debias_(GetSingleArgument<bool>("zero_debias", true)) {
    C2_ENFORCE(width_ >= 1, "curv_win_width must be positive, got ", width_);
    C2_ENFORCE(beta_ >= 0 && beta_ < 1, "beta must be in [0, 1), got ", beta_);
  }

  bool RunOnDevice() override {
    const Tensor& grad = Input(kGrad);
    const int64_t n = grad.numel();
    for (int i : {kParam, kMoment, kGAvg, kG2Avg}) {
      CheckSameShape(Input(i), debug_def().input(i).c_str(), grad, "grad");
    }
    const int64_t t = ScalarInt(Input(kIter), "iter");
    float* out[8];
    for (int i = 0; i < 8; ++i) {
      C2_ENFORCE(Input(i).IsType<float>(), "input ", i, " ('", debug_def().input(i),
                 "') must be float, got ", Input(i).DebugString());
      if (!IsInputOutputAlias(i, i)) Output(i)->CopyFrom(Input(i));
      out[i] = Output(i)->mutable_data<float>();
    }
    C2_ENFORCE(Input(kCurvWin).numel() == width_ && Input(kScalars).numel() == 4 &&
                   Input(kLr).numel() == 1 && Input(kMu).numel() == 1,
               "curv_win must hold curv_win_width = ", width_,
               " values, scalars_memory 4, lr_avg and mu_avg 1");
    const float* g = grad.data<float>();
    const double b = beta_, debias = zero_debias_ ? 1 - std::pow(b, t + 1) : 1.0;
    auto average = [&](float* avg, double value) {
      *avg = static_cast<float>(b * *avg + (1 - b) * value);
      return *avg / debias;
    };

    double h = 0, variance = 0;
    for (int64_t i = 0; i < n; ++i) {
      h += double(g[i]) * g[i];
      const double mean = average(&out[kGAvg][i], g[i]);
      const double square = average(&out[kG2Avg][i], double(g[i]) * g[i]);
      variance += std::max(square - mean * mean, 0.0);
    }
    float* win = out[kCurvWin];
    win[t % width_] = static_cast<float>(h);
    const int64_t filled = std::min<int64_t>(t + 1, width_);
    const auto range = std::minmax_element(win, win + filled);
    float* s = out[kScalars];
    const double h_max = average(&s[kHMax], *range.second);
    const double h_min = average(&s[kHMin], *range.first) + epsilon_;
    const double distance = average(&s[kGNorm], std::sqrt(h)) / (average(&s[kH], h) + epsilon_);

    const double p = distance * distance * h_min * h_min / (2 * (variance + epsilon_));
    const double sqrt_mu_step = 1 + CubicRoot(p);
    const double ratio = std::sqrt(std::max(h_max + epsilon_, h_min) / h_min);
    const double sqrt_mu = std::max(sqrt_mu_step, (ratio - 1) / (ratio + 1));
    const double mu = sqrt_mu * sqrt_mu;
    const double lr = (1 - sqrt_mu) * (1 - sqrt_mu) / h_min;
    out[kLr][0] = static_cast<float>(b * out[kLr][0] + (1 - b) * lr);
    out[kMu][0] = static_cast<float>(b * out[kMu][0] + (1 - b) * mu);

    const float lr_avg = out[kLr][0], mu_avg = out[kMu][0];
    float* w = out[kParam];
    float* m = out[kMoment];
    for (int64_t i = 0; i < n; ++i) {
      m[i] = mu_avg * m[i] + lr_avg * g[i];
      w[i] -= nesterov_ ? mu_avg * m[i] + lr_avg * g[i] : m[i];
    }
    return true;
  }

 private:
  int width_;
  float beta_, epsilon_;
  bool nesterov_, zero_debias_;
};

}  // namespace

REGISTER_CPU_OPERATOR(YellowFin, YellowFinOp);
OPERATOR_SCHEMA(YellowFin)
    .NumInputs(10)
    .NumOutputs(8)
    .AllowInplace({{0, 0}, {1, 1}, {2, 2}, {3, 3}, {4, 4}, {5, 5}, {6, 6}, {7, 7}})
    .Arg("curv_win_width", "runs in the curvature window (default 20)")
    .Arg("beta", "the averages' factor (default 0.999)")
    .Arg("epsilon", "keeps divisions finite (default 1e-6)")
    .Arg("nesterov", "1: Nesterov momentum (default 0)")
    .Arg("zero_debias", "1: debias the averages (default 1)")
    .Input(0, "param", "float parameter")
    .Input(1, "moment", "float, param's shape")
    .Input(2, "lr_avg", "(1) float: the tuned learning rate's average")
    .Input(3, "mu_avg", "(1) float: the tuned momentum's average")
    .Input(4, "curv_win", "(curv_win_width) float: the last gradient squared norms")
    .Input(5, "g_avg", "float, param's shape: the gradient's average")
    .Input(6, "g2_avg", "float, param's shape: the squared gradient's average")
    .Input(7, "scalars_memory", "(4) float: the averages of h_max, h_min, |g|, |g|^2")
    .Input(8, "grad", "float, param's shape")
    .Input(9, "iter", "(1) int64: the iteration")
    .SetDoc("Momentum SGD with the learning rate and momentum tuned by YellowFin.");
REGISTER_GRADIENT(YellowFin, ShouldNotDoGradient);

}  // namespace caffe2
