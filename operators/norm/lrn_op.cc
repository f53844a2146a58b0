// LRN: [X] -> [Y, scale?] (spec ops §1.2.7), local response normalization across channels.
// scale = bias + (alpha / size) * sum_{c' in [c - (size-1)/2, c + (size-1)/2]} x_{c'}^2 (zero
// padded), Y = X * scale^(-beta). Args: size (required, odd, > 0), alpha (0), beta (0), bias (1.0),
// order (NCHW default, or NHWC). X is (N, C, spatial...) or (N, spatial..., C), rank >= 2.
// LRNGradient: [X, Y, dY] -> [dX], recomputing the scale:
// dX_k = dY_k * scale_k^(-beta) - (2 alpha beta / size) * x_k * sum_{c in window(k)} dY_c * Y_c /
// scale_c.
#include <cmath>
#include <string>
#include <vector>

#include <Eigen/Core>

#include "core/gradient.h"
#include "core/operator.h"
#include "operators/common/parallel_for.h"

namespace caffe2 {
namespace {

using ArrF = Eigen::Array<float, Eigen::Dynamic, 1>;
using CMapArr = Eigen::Map<const ArrF>;
using MapArr = Eigen::Map<ArrF>;

struct LRNLayout {
  int64_t positions, C, stride;  // channel vectors, their length and element stride
  // Offset of the first channel of position p.
  int64_t Base(int64_t p, int64_t S) const {
    return stride == 1 ? p * C : (p / S) * C * S + (p % S);
  }
};

class LRNBase : public Operator<CPUContext> {
 public:
  LRNBase(const OperatorDef& def, Workspace* ws)
      : Operator<CPUContext>(def, ws),
        size_(GetSingleArgument<int>("size", 0)),
        alpha_(GetSingleArgument<float>("alpha", 0.0f)),
        beta_(GetSingleArgument<float>("beta", 0.0f)),
        bias_(GetSingleArgument<float>("bias", 1.0f)),
        order_(GetSingleArgument<std::string>("order", "NCHW")) {
    C2_ENFORCE(size_ > 0 && size_ % 2 == 1, "size must be a positive odd number, got ", size_);
    C2_ENFORCE(order_ == "NCHW" || order_ == "NHWC", "order must be NCHW or NHWC, got '", order_,
               "'");
  }

 protected:
  // Fills scale (X.numel()) and returns the layout.
  LRNLayout ComputeScale(const Tensor& X, std::vector<float>* scale, int64_t* S) const {
    C2_ENFORCE(X.IsType<float>() && X.ndim() >= 2, "X must be a float tensor of rank >= 2, got ",
               X.meta().name, " ", Tensor::DimsString(X.dims()));
    const bool nchw = order_ == "NCHW";
    const int64_t N = X.dim(0), C = nchw ? X.dim(1) : X.dim(X.ndim() - 1);
    *S = N * C > 0 ? X.numel() / (N * C) : 0;
    LRNLayout l{N * *S, C, nchw ? *S : 1};
    scale->resize(X.numel());
    const float* x = X.data<float>();
    const float a = alpha_ / size_;
    float* sc = scale->data();
    if (nchw) {
      // Squares, then the windowed sum over channel planes into the scale.
      ParallelFor(N, ElementWorkers(N, X.numel()), [&](int64_t n0, int64_t n1, int) {
        std::vector<float> sq(C * *S);
        for (int64_t n = n0; n < n1; ++n) {
          const int64_t off = n * C * *S;
          MapArr(sq.data(), C * *S) = CMapArr(x + off, C * *S).square();
          WindowSumPlanes(sq.data(), C, *S, sc + off);
          MapArr(sc + off, C * *S) = MapArr(sc + off, C * *S) * a + bias_;
        }
      });
      return l;
    }
    ParallelFor(
        l.positions, ElementWorkers(l.positions, X.numel()), [&](int64_t p0, int64_t p1, int) {
          std::vector<double> prefix(C + 1);
          for (int64_t p = p0; p < p1; ++p) {
            const int64_t base = l.Base(p, *S);
            prefix[0] = 0;
            for (int64_t c = 0; c < C; ++c) {
              const double v = x[base + c * l.stride];
              prefix[c + 1] = prefix[c] + v * v;
            }
            for (int64_t c = 0; c < C; ++c) {
              const int64_t lo = std::max<int64_t>(0, c - Half()),
                            hi = std::min<int64_t>(C, c + Half() + 1);
              sc[base + c * l.stride] = bias_ + a * static_cast<float>(prefix[hi] - prefix[lo]);
            }
          }
        });
    return l;
  }

  int Half() const { return (size_ - 1) / 2; }

  // out[c] = sum of the planes q[c'] (S values each) for c' in the window of c, for C planes.
  void WindowSumPlanes(const float* q, int64_t C, int64_t S, float* out) const {
    ArrF run = ArrF::Zero(S);
    for (int64_t c = 0; c < std::min<int64_t>(C, Half() + 1); ++c) run += CMapArr(q + c * S, S);
    for (int64_t c = 0; c < C; ++c) {
      MapArr(out + c * S, S) = run;
      if (c + Half() + 1 < C) run += CMapArr(q + (c + Half() + 1) * S, S);
      if (c - Half() >= 0) run -= CMapArr(q + (c - Half()) * S, S);
    }
  }

  int size_;
  float alpha_, beta_, bias_;
  std::string order_;
};

class LRNOp final : public LRNBase {
 public:
  using LRNBase::LRNBase;
  bool RunOnDevice() override {
    const Tensor& X = Input(0);
    std::vector<float> scale;
    int64_t S;
    ComputeScale(X, &scale, &S);
    Tensor* Y = Output(0);
    Y->ResizeLike(X);
    const float* x = X.data<float>();
    float* y = Y->mutable_data<float>();
    ParallelFor(
        X.numel(), ElementWorkers(X.numel(), X.numel() * 8), [&](int64_t b, int64_t e, int) {
          MapArr(y + b, e - b) =
              CMapArr(x + b, e - b) * (CMapArr(scale.data() + b, e - b).log() * -beta_).exp();
        });
    if (OutputSize() == 2) {
      Tensor* sc = Output(1);
      sc->ResizeLike(X);
      std::copy(scale.begin(), scale.end(), sc->mutable_data<float>());
    }
    return true;
  }
};

class LRNGradientOp final : public LRNBase {
 public:
  using LRNBase::LRNBase;
  bool RunOnDevice() override {
    const Tensor& X = Input(0);
    const Tensor& Y = Input(1);
    const Tensor& dY = Input(2);
    C2_ENFORCE(Y.dims() == X.dims() && dY.dims() == X.dims(), "Y ", Tensor::DimsString(Y.dims()),
               " and dY ", Tensor::DimsString(dY.dims()), " must be shaped like X ",
               Tensor::DimsString(X.dims()));
    std::vector<float> scale;
    int64_t S;
    const LRNLayout l = ComputeScale(X, &scale, &S);
    Tensor* dX = Output(0);
    dX->ResizeLike(X);
    const float* x = X.data<float>();
    const float* y = Y.data<float>();
    const float* dy = dY.data<float>();
    float* dx = dX->mutable_data<float>();
    const float k = 2.0f * alpha_ * beta_ / size_;
    if (l.stride != 1) {
      const int64_t N = X.dim(0), CS = l.C * S;
      ParallelFor(N, ElementWorkers(N, X.numel()), [&](int64_t n0, int64_t n1, int) {
        std::vector<float> ratio(CS), win(CS);
        for (int64_t n = n0; n < n1; ++n) {
          const int64_t off = n * CS;
          const CMapArr sc(scale.data() + off, CS), g(dy + off, CS);
          MapArr(ratio.data(), CS) = g * CMapArr(y + off, CS) / sc;
          WindowSumPlanes(ratio.data(), l.C, S, win.data());
          MapArr(dx + off, CS) =
              g * (sc.log() * -beta_).exp() - k * CMapArr(x + off, CS) * MapArr(win.data(), CS);
        }
      });
      return true;
    }
    ParallelFor(l.positions, ElementWorkers(l.positions, X.numel()),
                [&](int64_t p0, int64_t p1, int) {
                  std::vector<double> prefix(l.C + 1);
                  for (int64_t p = p0; p < p1; ++p) {
                    const int64_t base = l.Base(p, S);
                    prefix[0] = 0;
                    for (int64_t c = 0; c < l.C; ++c) {
                      const int64_t i = base + c * l.stride;
                      prefix[c + 1] = prefix[c] + static_cast<double>(dy[i]) * y[i] / scale[i];
                    }
                    for (int64_t c = 0; c < l.C; ++c) {
                      const int64_t i = base + c * l.stride;
                      const int64_t lo = std::max<int64_t>(0, c - Half()),
                                    hi = std::min<int64_t>(l.C, c + Half() + 1);
                      dx[i] = dy[i] * std::pow(scale[i], -beta_) -
                              k * x[i] * static_cast<float>(prefix[hi] - prefix[lo]);
                    }
                  }
                });
    return true;
  }
};

class GetLRNGradient final : public GradientMakerBase {
  using GradientMakerBase::GradientMakerBase;
  std::vector<OperatorDef> GetGradientDefs() override {
    return SingleGradientDef("LRNGradient", "", {I(0), O(0), GO(0)}, {GI(0)});
  }
};

}  // namespace

REGISTER_CPU_OPERATOR(LRN, LRNOp);
OPERATOR_SCHEMA(LRN)
    .NumInputs(1)
    .NumOutputs(1, 2)
    .TensorInference([](const OperatorDef& def, const std::vector<TensorShape>& in) {
      return std::vector<TensorShape>(def.output_size(), in.at(0));
    })
    .Arg("size", "odd window of channels", true)
    .Arg("alpha", "scale multiplier (default 0)")
    .Arg("beta", "exponent (default 0)")
    .Arg("bias", "additive constant (default 1.0)")
    .Arg("order", "NCHW (default) or NHWC")
    .SetDoc("Local response normalization across channels.")
    .Input(0, "X", "Input")
    .Output(0, "Y", "Normalized output")
    .Output(1, "scale", "Optional bias + alpha/size * windowed sum of squares");
REGISTER_GRADIENT(LRN, GetLRNGradient);
REGISTER_CPU_OPERATOR(LRNGradient, LRNGradientOp);
OPERATOR_SCHEMA(LRNGradient)
    .NumInputs(3)
    .NumOutputs(1)
    .SetDoc("The gradient of LRN (the scale recomputed from X): [X, Y, dY] -> [dX].")
    .Arg("size", "(int) the forward op's window of channels: positive and odd")
    .Arg("alpha", "(float, default 0) the forward op's scale multiplier")
    .Arg("beta", "(float, default 0) the forward op's exponent")
    .Arg("bias", "(float, default 1.0) the forward op's additive constant")
    .Arg("order", "(string, default \"NCHW\") layout of X: \"NCHW\" or \"NHWC\"");

}  // namespace caffe2
