#include "operators/norm/norm_op_checks.h"
#include "operators/norm/spatial_bn_op.h"

#include <cmath>
#include <vector>

#include <Eigen/Core>

#include "core/gradient.h"
#include "core/operator.h"
#include "operators/common/parallel_for.h"

namespace caffe2 {

bool ParseOrderIsNCHW(const std::string& order) {
  C2_ENFORCE(order == "NCHW" || order == "NHWC", "order must be NCHW or NHWC, got '", order, "'");
  return order == "NCHW";
}

ChannelLayout GetChannelLayout(const Tensor& X, const std::string& order) {
  C2_ENFORCE(X.IsType<float>(), "X must be float, got ", X.meta().name);
  C2_ENFORCE(X.ndim() >= 3 && X.ndim() <= 5, "X must have rank 3 to 5, got ",
             Tensor::DimsString(X.dims()));
  ChannelLayout l;
  l.nchw = ParseOrderIsNCHW(order);
  l.N = X.dim(0);
  l.C = l.nchw ? X.dim(1) : X.dim(X.ndim() - 1);
  l.S = (l.N * l.C) > 0 ? X.numel() / (l.N * l.C) : 0;
  return l;
}

namespace {

using ArrF = Eigen::Array<float, Eigen::Dynamic, 1>;
using ArrD = Eigen::Array<double, Eigen::Dynamic, 1>;
using CMap = Eigen::Map<const ArrF>;
using MMap = Eigen::Map<ArrF>;

// Kernels walk "units": the (n, c) planes of S values for NCHW, the rows of C values for NHWC.
int64_t Units(const ChannelLayout& l) { return l.nchw ? l.N * l.C : l.N * l.S; }
int64_t Numel(const ChannelLayout& l) { return l.N * l.C * l.S; }

// Per-channel sums of f(unit values, channel) over all units, in double, split across threads.
// f(k, u0, u1, acc) adds the contribution of units [u0, u1) to the C-long accumulators acc.
template <class Fn>
void ReduceChannels(const ChannelLayout& l, int num_acc, Fn fn, std::vector<ArrD>* out) {
  const int chunks = ElementWorkers(Units(l), Numel(l));
  std::vector<std::vector<ArrD>> part(chunks, std::vector<ArrD>(num_acc, ArrD::Zero(l.C)));
  ParallelFor(Units(l), chunks, [&](int64_t u0, int64_t u1, int k) { fn(u0, u1, &part[k]); });
  out->assign(num_acc, ArrD::Zero(l.C));
  for (auto& p : part)
    for (int j = 0; j < num_acc; ++j) (*out)[j] += p[j];
}

}  // namespace

void ChannelSums(const float* x, const ChannelLayout& l, double* sum, double* sumsq) {
  std::vector<ArrD> acc;
  ReduceChannels(
      l, 2,
      [&](int64_t u0, int64_t u1, std::vector<ArrD>* a) {
        for (int64_t u = u0; u < u1; ++u) {
          if (l.nchw) {
            const CMap v(x + u * l.S, l.S);
            (*a)[0][u % l.C] += v.sum();
            (*a)[1][u % l.C] += v.square().sum();
          } else {
            const CMap v(x + u * l.C, l.C);
            (*a)[0] += v.cast<double>();
            (*a)[1] += v.square().cast<double>();
          }
        }
      },
      &acc);
  for (int64_t c = 0; c < l.C; ++c) {
    sum[c] = acc[0][c];
    sumsq[c] = acc[1][c];
  }
}

void ChannelBackpropSums(const float* x, const float* dy, const float* mean, const float* inv_std,
                         const ChannelLayout& l, float* dscale, float* dbias) {
  std::vector<ArrD> acc;
  const CMap m(mean, l.C);
  ReduceChannels(
      l, 2,
      [&](int64_t u0, int64_t u1, std::vector<ArrD>* a) {
        for (int64_t u = u0; u < u1; ++u) {
          if (l.nchw) {
            const int64_t c = u % l.C;
            const CMap xv(x + u * l.S, l.S), g(dy + u * l.S, l.S);
            (*a)[0][c] += ((xv - mean[c]) * g).sum();
            (*a)[1][c] += g.sum();
          } else {
            const CMap xv(x + u * l.C, l.C), g(dy + u * l.C, l.C);
            (*a)[0] += ((xv - m) * g).cast<double>();
            (*a)[1] += g.cast<double>();
          }
        }
      },
      &acc);
  for (int64_t c = 0; c < l.C; ++c) {
    dscale[c] = static_cast<float>(acc[0][c] * inv_std[c]);
    dbias[c] = static_cast<float>(acc[1][c]);
  }
}

namespace {

// out = p * in1 + q * in2 + r with per-channel p, q, r (in2 may be null when q is unused).
void ChannelAffine2(const float* in1, const std::vector<float>& p, const float* in2,
                    const std::vector<float>& q, const std::vector<float>& r,
                    const ChannelLayout& l, float* out) {
  ParallelFor(Units(l), ElementWorkers(Units(l), Numel(l)), [&](int64_t u0, int64_t u1, int) {
    const CMap P(p.data(), l.C), R(r.data(), l.C);
    for (int64_t u = u0; u < u1; ++u) {
      if (l.nchw) {
        const int64_t c = u % l.C;
        MMap o(out + u * l.S, l.S);
        if (in2) {
          o = CMap(in1 + u * l.S, l.S) * p[c] + CMap(in2 + u * l.S, l.S) * q[c] + r[c];
        } else {
          o = CMap(in1 + u * l.S, l.S) * p[c] + r[c];
        }
      } else {
        MMap o(out + u * l.C, l.C);
        if (in2) {
          o = CMap(in1 + u * l.C, l.C) * P + CMap(in2 + u * l.C, l.C) * CMap(q.data(), l.C) + R;
        } else {
          o = CMap(in1 + u * l.C, l.C) * P + R;
        }
      }
    }
  });
}

// y = x * a[c] + b[c], per channel.
void ApplyAffine(const float* x, const std::vector<float>& a, const std::vector<float>& b,
                 const ChannelLayout& l, float* y) {
  ChannelAffine2(x, a, nullptr, a, b, l, y);
}

class SpatialBNOp final : public Operator<CPUContext> {
 public:
  SpatialBNOp(const OperatorDef& def, Workspace* ws)
      : Operator<CPUContext>(def, ws),
        is_test_(GetSingleArgument<int>("is_test", 0) != 0),
        epsilon_(GetSingleArgument<float>("epsilon", 1e-5f)),
        momentum_(GetSingleArgument<float>("momentum", 0.9f)),
        order_(GetSingleArgument<std::string>("order", "NCHW")),
        num_batches_(GetSingleArgument<int>("num_batches", 1)) {
    ParseOrderIsNCHW(order_);
    CheckSpatialBNArgs(*this, is_test_, epsilon_, momentum_, num_batches_);
  }

  bool RunOnDevice() override {
    const Tensor& X = Input(0);
    const ChannelLayout l = GetChannelLayout(X, order_);
    const int64_t C = l.C;
    CheckSpatialBNInputs(*this, C, is_test_, num_batches_);
    const float* scale = Input(1).data<float>();
    const float* bias = Input(2).data<float>();
    std::vector<float> a(C), b(C);
    if (is_test_) {
      const float* mean = Input(3).data<float>();
      const float* var = Input(4).data<float>();
      for (int64_t c = 0; c < C; ++c) {
        a[c] = scale[c] / std::sqrt(var[c] + epsilon_);
        b[c] = bias[c] - mean[c] * a[c];
      }
    } else {
      std::vector<double> sum(C), sumsq(C);
      double count = static_cast<double>(l.N * l.S);
      if (num_batches_ > 1) {
        for (int64_t c = 0; c < C; ++c) {
          sum[c] = Input(5).data<float>()[c];
          sumsq[c] = Input(6).data<float>()[c];
        }
        count *= num_batches_;
      } else {
        ChannelSums(X.data<float>(), l, sum.data(), sumsq.data());
      }
      CheckSpatialBNBatch(count, X);
      Tensor* running_mean = Output(1);
      Tensor* running_var = Output(2);
      for (Tensor* r : {running_mean, running_var}) {
        if (r->numel() != C || !r->IsType<float>()) {
          r->Resize(C);
          float* p = r->mutable_data<float>();
          std::fill(p, p + C, 0.0f);
        }
      }
      Tensor* saved_mean = Output(3);
      Tensor* saved_inv_std = Output(4);
      saved_mean->Resize(C);
      saved_inv_std->Resize(C);
      float* rm = running_mean->mutable_data<float>();
      float* rv = running_var->mutable_data<float>();
      float* sm = saved_mean->mutable_data<float>();
      float* si = saved_inv_std->mutable_data<float>();
      for (int64_t c = 0; c < C; ++c) {
        const double mean = sum[c] / count;
        const double var = std::max(0.0, sumsq[c] / count - mean * mean);
        rm[c] = rm[c] * momentum_ + static_cast<float>(mean) * (1 - momentum_);
        rv[c] = rv[c] * momentum_ + static_cast<float>(var) * (1 - momentum_);
        sm[c] = static_cast<float>(mean);
        si[c] = static_cast<float>(1.0 / std::sqrt(var + epsilon_));
        a[c] = scale[c] * si[c];
        b[c] = bias[c] - sm[c] * a[c];
      }
    }
    Tensor* Y = Output(0);
    Y->ResizeLike(X);
    ApplyAffine(X.data<float>(), a, b, l, Y->mutable_data<float>());
    return true;
  }

 private:
  bool is_test_;
  float epsilon_, momentum_;
  std::string order_;
  int num_batches_;
};

class SpatialBNGradientOp final : public Operator<CPUContext> {
 public:
  SpatialBNGradientOp(const OperatorDef& def, Workspace* ws)
      : Operator<CPUContext>(def, ws),
        is_test_(GetSingleArgument<int>("is_test", 0) != 0),
        epsilon_(GetSingleArgument<float>("epsilon", 1e-5f)),
        order_(GetSingleArgument<std::string>("order", "NCHW")),
        num_batches_(GetSingleArgument<int>("num_batches", 1)) {
    ParseOrderIsNCHW(order_);
    CheckSpatialBNNumBatches(num_batches_);
  }

  bool RunOnDevice() override {
    const Tensor& X = Input(0);
    const Tensor& dY = Input(2);
    const ChannelLayout l = GetChannelLayout(X, order_);
    const int64_t C = l.C;
    CheckSpatialBNGradientInputs(*this, C, is_test_);
    const float* x = X.data<float>();
    const float* dy = dY.data<float>();
    const float* scale = Input(1).data<float>();
    const float* mean = Input(3).data<float>();
    std::vector<float> inv_std(C);
    for (int64_t c = 0; c < C; ++c) {
      const float v = Input(4).data<float>()[c];
      inv_std[c] = is_test_ ? 1.0f / std::sqrt(v + epsilon_) : v;
    }
    std::vector<float> dscale(C), dbias(C);
    if (InputSize() == 7 && !is_test_) {
      for (int64_t c = 0; c < C; ++c) {
        dscale[c] = Input(5).data<float>()[c] / num_batches_;
        dbias[c] = Input(6).data<float>()[c] / num_batches_;
      }
    } else {
      ChannelBackpropSums(x, dy, mean, inv_std.data(), l, dscale.data(), dbias.data());
    }
    Tensor* dX = Output(0);
    dX->ResizeLike(X);
    float* dx = dX->mutable_data<float>();
    if (is_test_) {
      std::vector<float> a(C), zero(C, 0.0f);
      for (int64_t c = 0; c < C; ++c) a[c] = scale[c] * inv_std[c];
      ApplyAffine(dy, a, zero, l, dx);
    } else {
      // dX = a * dY + b * X + k, with a = scale*inv_std, b = -a*inv_std*dscale/M and k folding the
      // rest.
      const float inv_m = 1.0f / static_cast<float>(l.N * l.S);
      std::vector<float> a(C), b(C), k(C);
      for (int64_t c = 0; c < C; ++c) {
        a[c] = scale[c] * inv_std[c];
        b[c] = -a[c] * inv_std[c] * dscale[c] * inv_m;
        k[c] = -a[c] * dbias[c] * inv_m - b[c] * mean[c];
      }
      ChannelAffine2(dy, a, x, b, k, l, dx);
    }
    Tensor* dS = Output(1);
    Tensor* dB = Output(2);
    dS->Resize(C);
    dB->Resize(C);
    std::copy(dscale.begin(), dscale.end(), dS->mutable_data<float>());
    std::copy(dbias.begin(), dbias.end(), dB->mutable_data<float>());
    return true;
  }

 private:
  bool is_test_;
  float epsilon_;
  std::string order_;
  int num_batches_;
};

class GetSpatialBNGradient final : public GradientMakerBase {
  using GradientMakerBase::GradientMakerBase;
  std::vector<OperatorDef> GetGradientDefs() override {
    ArgumentHelper args(Def());
    const bool is_test = args.GetSingleArgument<int>("is_test", 0) != 0;
    const int num_batches = args.GetSingleArgument<int>("num_batches", 1);
    std::vector<std::string> inputs{I(0), I(1), GO(0)};
    if (is_test) {
      inputs.push_back(I(3));
      inputs.push_back(I(4));
    } else {
      inputs.push_back(O(3));
      inputs.push_back(O(4));
      if (num_batches > 1) {
        inputs.push_back(GI(1));
        inputs.push_back(GI(2));
      }
    }
    return SingleGradientDef("SpatialBNGradient", "", inputs, {GI(0), GI(1), GI(2)});
  }
};

std::vector<TensorShape> SpatialBNInference(const OperatorDef& def,
                                            const std::vector<TensorShape>& in) {
  ArgumentHelper args(def);
  const bool nchw = args.GetSingleArgument<std::string>("order", "NCHW") != "NHWC";
  const TensorShape& x = in.at(0);
  std::vector<TensorShape> out{x};
  if (def.output_size() == 5) {
    TensorShape c;
    c.set_data_type(TensorProto::FLOAT);
    c.add_dims(x.dims_size() > 1 ? x.dims(nchw ? 1 : x.dims_size() - 1) : 0);
    for (int i = 0; i < 4; ++i) out.push_back(c);
  }
  return out;
}

}  // namespace

REGISTER_CPU_OPERATOR(SpatialBN, SpatialBNOp);
OPERATOR_SCHEMA(SpatialBN)
    .NumInputs({5, 7})
    .NumOutputs({1, 5})
    .PointwiseCostInference(2)
    .EnforceInplace({{3, 1}, {4, 2}})
    .AllowInplace([](int in, int out) {
      return (in == 0 && out == 0) || (in == 3 && out == 1) || (in == 4 && out == 2);
    })
    .TensorInference(SpatialBNInference)
    .Arg("is_test", "1: normalize with the given mean/var and produce only Y (default 0)")
    .Arg("epsilon", "added to the variance (default 1e-5)")
    .Arg("momentum", "running = running * momentum + batch * (1 - momentum) (default 0.9)")
    .Arg("order", "NCHW (default) or NHWC")
    .Arg("num_batches", "batches aggregated in the sums/sumsq inputs (default 1)")
    .SetDoc("Spatial batch normalization.")
    .Input(0, "X", "Input (N, C, spatial...) or (N, spatial..., C)")
    .Input(1, "scale", "Per-channel scale (C)")
    .Input(2, "bias", "Per-channel bias (C)")
    .Input(3, "mean", "Running mean (C), updated in place in training")
    .Input(4, "var", "Running variance (C), updated in place in training")
    .Input(5, "sums", "Optional per-channel sums over num_batches batches")
    .Input(6, "sumsq", "Optional per-channel sums of squares over num_batches batches")
    .Output(0, "Y", "Normalized output, shaped like X")
    .Output(1, "running_mean", "Updated running mean (training)")
    .Output(2, "running_var", "Updated running variance (training)")
    .Output(3, "saved_mean", "Batch mean (training)")
    .Output(4, "saved_inv_std", "Batch 1/sqrt(var + epsilon) (training)");
REGISTER_GRADIENT(SpatialBN, GetSpatialBNGradient);
REGISTER_CPU_OPERATOR(SpatialBNGradient, SpatialBNGradientOp);
OPERATOR_SCHEMA(SpatialBNGradient)
    .NumInputs({5, 7})
    .NumOutputs(3)
    .AllowInplace({{5, 1}, {6, 2}})
    .SetDoc(
        "The gradient of SpatialBN: [X, scale, dY, mean, inv_std or var, (dscale, dbias)] -> "
        "[dX, dscale, dbias].")
    .Arg("is_test",
         "(int, default 0) 1: inputs 3 and 4 are the running mean and variance of a test-mode "
         "forward op")
    .Arg("epsilon", "(float, default 1e-5) the forward op's epsilon, added to the variance")
    .Arg("order", "(string, default \"NCHW\") layout of X and dY: \"NCHW\" or \"NHWC\"")
    .Arg("num_batches",
         "(int, default 1) batches aggregated in the dscale/dbias inputs, which are divided by "
         "it");

}  // namespace caffe2
