#include "operators/conv/pool_op.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <vector>

#include "core/gpu_fallback_declarations.h"
#include "core/gradient.h"
#include "core/op_alias.h"
#include "operators/common/input_checks.h"
#include "operators/common/parallel_for.h"
#include "operators/conv/conv_pool_schema.h"

namespace caffe2 {
namespace {

using Dims3 = ConvPoolGeometry::Dims3;

// Pooling is memory bound: a thread pays off from about this many window element visits.
constexpr double kMinVisitsPerWorker = 2e5;

// The in-bounds part of one window along one dim: inputs start + k * dilation for k in [lo, hi).
struct Span {
  int64_t start;
  int lo, hi, dilation;
  int64_t at(int k) const { return start + static_cast<int64_t>(k) * dilation; }
  int count() const { return hi - lo; }
};

inline Span WindowSpan(int64_t o, int dim, const Dims3& g) {
  Span s;
  s.dilation = g.dilation[dim];
  s.start = o * g.stride[dim] - g.pad[dim];
  const int64_t lo = s.start >= 0 ? 0 : (-s.start + s.dilation - 1) / s.dilation;
  const int64_t left = g.in[dim] - s.start;
  const int64_t hi =
      std::min<int64_t>(g.kernel[dim], left <= 0 ? 0 : (left + s.dilation - 1) / s.dilation);
  s.hi = static_cast<int>(hi);
  s.lo = static_cast<int>(std::min(lo, hi));
  return s;
}

// The spans of every output position of one plane, per dim (computed once per plane: the integer
// divisions in WindowSpan would otherwise dominate small windows).
struct PlaneSpans {
  std::vector<Span> d, h, w;
  explicit PlaneSpans(const Dims3& g) {
    std::vector<Span>* dims[] = {&d, &h, &w};
    for (int i = 0; i < 3; ++i) {
      for (int64_t o = 0; o < g.out[i]; ++o) dims[i]->push_back(WindowSpan(o, i, g));
    }
  }
};

// fn(output index, spans along d, h, w) for every output position, in order.
template <class Fn>
void ForEachWindow(const PlaneSpans& spans, Fn&& fn) {
  int64_t o = 0;
  for (const Span& sd : spans.d) {
    for (const Span& sh : spans.h) {
      for (const Span& sw : spans.w) fn(o++, sd, sh, sw);
    }
  }
}

// fn(flat input index) for every in-bounds element of one window.
template <class Fn>
inline void ForEachInput(const Dims3& g, const Span& sd, const Span& sh, const Span& sw, Fn&& fn) {
  for (int kd = sd.lo; kd < sd.hi; ++kd) {
    for (int kh = sh.lo; kh < sh.hi; ++kh) {
      const int64_t base = (sd.at(kd) * g.in[1] + sh.at(kh)) * g.in[2];
      for (int kw = sw.lo; kw < sw.hi; ++kw) fn(base + sw.at(kw));
    }
  }
}

inline int64_t Count(const Span& sd, const Span& sh, const Span& sw) {
  return static_cast<int64_t>(sd.count()) * sh.count() * sw.count();
}

// x == y for non-NaN floats (+0 equals -0), compared on the bits: which element of a window is its
// max is unpredictable, and a float compare costs a branch on the unordered flag.
inline bool SameValue(float a, float b) {
  uint32_t ia, ib;
  std::memcpy(&ia, &a, sizeof ia);
  std::memcpy(&ib, &b, sizeof ib);
  return (ia == ib) | (((ia | ib) & 0x7fffffffu) == 0);
}

// Each pooler folds a window into an accumulator (Acc an element, Combine two accumulators); for
// the gradient, Scale prepares an output's dY once and Grad gives one window element's share.
struct MaxPooler {
  float Init() const { return -std::numeric_limits<float>::infinity(); }
  float Acc(float a, float x) const { return std::max(a, x); }
  float Combine(float a, float b) const { return std::max(a, b); }
  float Finish(float a, int64_t count) const { return count ? a : 0.f; }
  float Scale(float, float dy, int64_t) const { return dy; }
  float Grad(float x, float y, float scaled) const {
    return scaled * static_cast<float>(SameValue(x, y));
  }
};

struct AveragePooler {
  float Init() const { return 0.f; }
  float Acc(float a, float x) const { return a + x; }
  float Combine(float a, float b) const { return a + b; }
  float Finish(float a, int64_t count) const { return count ? a / static_cast<float>(count) : 0.f; }
  float Scale(float, float dy, int64_t count) const { return dy / static_cast<float>(count); }
  float Grad(float, float, float scaled) const { return scaled; }
};

struct LpPooler {
  float p;
  float Init() const { return 0.f; }
  float Acc(float a, float x) const { return a + std::pow(std::abs(x), p); }
  float Combine(float a, float b) const { return a + b; }
  float Finish(float a, int64_t) const { return std::pow(a, 1.f / p); }
  float Scale(float y, float dy, int64_t) const {
    return y == 0.f ? 0.f : dy / std::pow(y, p - 1.f);
  }
  float Grad(float x, float, float scaled) const {
    return scaled * std::copysign(std::pow(std::abs(x), p - 1.f), x);
  }
};

template <PoolKind kKind, class Fn>
void WithPooler(float p, Fn&& fn) {
  if constexpr (kKind == PoolKind::kMax) {
    fn(MaxPooler{});
  } else if constexpr (kKind == PoolKind::kAverage) {
    fn(AveragePooler{});
  } else {
    fn(LpPooler{p});
  }
}

// One (image, channel) plane of NCHW.
// One (image, channel) plane of NCHW, a row of outputs at a time: first the window's input rows are
// folded into one row `acc` (a loop over the contiguous row that vectorizes), then each output
// combines its columns of `acc`. `acc` holds in[2] floats.
template <class Pooler>
void ForwardPlane(const Pooler& pool, const Dims3& g, const PlaneSpans& spans, const float* x,
                  float* y, float* acc) {
  const int64_t IH = g.in[1], IW = g.in[2];
  for (const Span& sd : spans.d) {
    for (const Span& sh : spans.h) {
      std::fill(acc, acc + IW, pool.Init());
      for (int kd = sd.lo; kd < sd.hi; ++kd) {
        for (int kh = sh.lo; kh < sh.hi; ++kh) {
          const float* row = x + (sd.at(kd) * IH + sh.at(kh)) * IW;
          for (int64_t i = 0; i < IW; ++i) acc[i] = pool.Acc(acc[i], row[i]);
        }
      }
      const int64_t rows = static_cast<int64_t>(sd.count()) * sh.count();
      for (const Span& sw : spans.w) {
        float a = pool.Init();
        for (int kw = sw.lo; kw < sw.hi; ++kw) a = pool.Combine(a, acc[sw.at(kw)]);
        *y++ = pool.Finish(rows ? a : pool.Init(), rows * sw.count());
      }
    }
  }
}

// One NHWC image: positions of C contiguous channels.
template <class Pooler>
void ForwardImageNHWC(const Pooler& pool, const Dims3& g, const PlaneSpans& spans, int64_t C,
                      const float* x, float* y) {
  ForEachWindow(spans, [&](int64_t o, const Span& sd, const Span& sh, const Span& sw) {
    float* yo = y + o * C;
    std::fill(yo, yo + C, pool.Init());
    ForEachInput(g, sd, sh, sw, [&](int64_t i) {
      const float* xi = x + i * C;
      for (int64_t c = 0; c < C; ++c) yo[c] = pool.Acc(yo[c], xi[c]);
    });
    const int64_t count = Count(sd, sh, sw);
    for (int64_t c = 0; c < C; ++c) yo[c] = pool.Finish(yo[c], count);
  });
}

// One NCHW plane, a row of outputs at a time: the outputs' scaled gradients are computed once, then
// each input row of the window walks them.
template <class Pooler>
void BackwardPlane(const Pooler& pool, const Dims3& g, const PlaneSpans& spans, const float* x,
                   const float* y, const float* dy, float* dx, float* scaled) {
  const int64_t IH = g.in[1], IW = g.in[2];
  const int64_t OW = static_cast<int64_t>(spans.w.size());
  for (const Span& sd : spans.d) {
    for (const Span& sh : spans.h) {
      const int64_t rows = static_cast<int64_t>(sd.count()) * sh.count();
      for (int64_t ow = 0; ow < OW; ++ow)
        scaled[ow] = pool.Scale(y[ow], dy[ow], rows * spans.w[ow].count());
      for (int kd = sd.lo; kd < sd.hi; ++kd) {
        for (int kh = sh.lo; kh < sh.hi; ++kh) {
          const int64_t offset = (sd.at(kd) * IH + sh.at(kh)) * IW;
          const float* xr = x + offset;
          float* dxr = dx + offset;
          for (int64_t ow = 0; ow < OW; ++ow) {
            const Span& sw = spans.w[ow];
            const float yo = y[ow], so = scaled[ow];
            for (int kw = sw.lo; kw < sw.hi; ++kw) {
              const int64_t i = sw.at(kw);
              dxr[i] += pool.Grad(xr[i], yo, so);
            }
          }
        }
      }
      y += OW;
      dy += OW;
    }
  }
}

template <class Pooler>
void BackwardImageNHWC(const Pooler& pool, const Dims3& g, const PlaneSpans& spans, int64_t C,
                       const float* x, const float* y, const float* dy, float* dx, float* scaled) {
  ForEachWindow(spans, [&](int64_t o, const Span& sd, const Span& sh, const Span& sw) {
    const int64_t count = Count(sd, sh, sw);
    const float* yo = y + o * C;
    const float* dyo = dy + o * C;
    for (int64_t c = 0; c < C; ++c) scaled[c] = pool.Scale(yo[c], dyo[c], count);
    ForEachInput(g, sd, sh, sw, [&](int64_t i) {
      const float* xi = x + i * C;
      float* dxi = dx + i * C;
      for (int64_t c = 0; c < C; ++c) dxi[c] += pool.Grad(xi[c], yo[c], scaled[c]);
    });
  });
}

float ReadP(const OperatorBase& op) {
  const float p = op.GetSingleArgument<float>("p", 2.f);
  C2_ENFORCE(p > 0.f, "p must be positive, got ", p);
  return p;
}

}  // namespace

template <PoolKind kKind>
PoolOp<kKind>::PoolOp(const OperatorDef& def, Workspace* ws)
    : Operator<CPUContext>(def, ws),
      args_(ArgumentHelper(def)),
      p_(kKind == PoolKind::kLp ? ReadP(*this) : 2.f) {}

template <PoolKind kKind>
bool PoolOp<kKind>::RunOnDevice() {
  const Tensor& X = Input(0);
  CheckFloat(X, "X");
  const ConvPoolGeometry g = args_.Resolve(X.dims());
  // An empty image with outputs to fill: every window would pool nothing.
  C2_ENFORCE(g.in_image_size() > 0 || g.N * g.C == 0, "X ", Tensor::DimsString(X.dims()),
             " has an empty image: no window covers an input element");
  Tensor* Y = Output(0);
  Y->Resize(g.OutputDims(g.C));
  float* y = Y->mutable_data<float>();
  if (Y->numel() == 0) return true;
  const float* x = X.data<float>();
  const Dims3 d3 = g.As3D();
  const PlaneSpans spans(d3);
  const int64_t I = g.in_image_size(), P = g.out_image_size(), C = g.C;
  const double visits = static_cast<double>(Y->numel()) * g.kernel_size();
  WithPooler<kKind>(p_, [&](const auto& pool) {
    if (g.order == StorageOrder::NCHW) {
      const int64_t planes = g.N * C;
      ParallelFor(planes, KernelWorkers(planes, visits, kMinVisitsPerWorker),
                  [&](int64_t b, int64_t e, int) {
                    std::vector<float> acc(d3.in[2]);
                    for (int64_t i = b; i < e; ++i)
                      ForwardPlane(pool, d3, spans, x + i * I, y + i * P, acc.data());
                  });
    } else {
      ParallelFor(g.N, KernelWorkers(g.N, visits, kMinVisitsPerWorker),
                  [&](int64_t b, int64_t e, int) {
                    for (int64_t n = b; n < e; ++n)
                      ForwardImageNHWC(pool, d3, spans, C, x + n * I * C, y + n * P * C);
                  });
    }
  });
  return true;
}

template <PoolKind kKind>
PoolGradientOp<kKind>::PoolGradientOp(const OperatorDef& def, Workspace* ws)
    : Operator<CPUContext>(def, ws),
      args_(ArgumentHelper(def)),
      p_(kKind == PoolKind::kLp ? ReadP(*this) : 2.f) {}

template <PoolKind kKind>
bool PoolGradientOp<kKind>::RunOnDevice() {
  const Tensor& X = Input(0);
  const Tensor& Y = Input(1);
  const Tensor& dY = Input(2);
  CheckFloat(X, "X");
  CheckFloat(Y, "Y");
  CheckFloat(dY, "dY");
  const ConvPoolGeometry g = args_.Resolve(X.dims());
  const std::vector<int64_t> y_dims = g.OutputDims(g.C);
  CheckPoolGradientShapes(X, Y, dY, y_dims);
  Tensor* dX = Output(0);
  dX->ResizeLike(X);
  float* dx = dX->mutable_data<float>();
  std::fill(dx, dx + dX->numel(), 0.f);
  if (dY.numel() == 0) return true;
  const float* x = X.data<float>();
  const float* y = Y.data<float>();
  const float* dy = dY.data<float>();
  const Dims3 d3 = g.As3D();
  const PlaneSpans spans(d3);
  const int64_t I = g.in_image_size(), P = g.out_image_size(), C = g.C;
  const double visits = static_cast<double>(dY.numel()) * g.kernel_size();
  WithPooler<kKind>(p_, [&](const auto& pool) {
    if (g.order == StorageOrder::NCHW) {
      const int64_t planes = g.N * C;
      ParallelFor(planes, KernelWorkers(planes, visits, kMinVisitsPerWorker),
                  [&](int64_t b, int64_t e, int) {
                    std::vector<float> scaled(d3.out[2]);
                    for (int64_t i = b; i < e; ++i) {
                      BackwardPlane(pool, d3, spans, x + i * I, y + i * P, dy + i * P, dx + i * I,
                                    scaled.data());
                    }
                  });
    } else {
      ParallelFor(g.N, KernelWorkers(g.N, visits, kMinVisitsPerWorker),
                  [&](int64_t b, int64_t e, int) {
                    std::vector<float> scaled(C);
                    for (int64_t n = b; n < e; ++n) {
                      BackwardImageNHWC(pool, d3, spans, C, x + n * I * C, y + n * P * C,
                                        dy + n * P * C, dx + n * I * C, scaled.data());
                    }
                  });
    }
  });
  return true;
}

namespace {

class GetPoolGradient final : public GradientMakerBase {
  using GradientMakerBase::GradientMakerBase;
  std::vector<OperatorDef> GetGradientDefs() override {
    return SingleGradientDef(def_.type() + "Gradient", "", {I(0), O(0), GO(0)}, {GI(0)});
  }
};

std::vector<TensorShape> PoolInference(const OperatorDef& def, const std::vector<TensorShape>& in) {
  const ConvPoolGeometry g = ResolveConvPoolShape(def, in.at(0));
  TensorShape y;
  y.set_data_type(in[0].data_type());
  for (int64_t d : g.OutputDims(g.C)) y.add_dims(d);
  return {y};
}

OpSchema::Cost PoolCost(const OperatorDef& def, const std::vector<TensorShape>& in) {
  const ConvPoolGeometry g = ResolveConvPoolShape(def, in.at(0));
  const uint64_t x = g.N * g.C * g.in_image_size(), y = g.N * g.C * g.out_image_size();
  OpSchema::Cost c;
  c.flops = y * g.kernel_size();
  c.bytes_moved = sizeof(float) * (x + y);
  return c;
}

using MaxPoolOp = PoolOp<PoolKind::kMax>;
using AveragePoolOp = PoolOp<PoolKind::kAverage>;
using LpPoolOp = PoolOp<PoolKind::kLp>;
using MaxPoolGradientOp = PoolGradientOp<PoolKind::kMax>;
using AveragePoolGradientOp = PoolGradientOp<PoolKind::kAverage>;
using LpPoolGradientOp = PoolGradientOp<PoolKind::kLp>;

}  // namespace

REGISTER_CPU_OPERATOR(MaxPool, MaxPoolOp);
REGISTER_CPU_OPERATOR(AveragePool, AveragePoolOp);
REGISTER_CPU_OPERATOR(LpPool, LpPoolOp);
REGISTER_GPU_FALLBACK(LpPool);  // CUDA runs the CPU kernel
REGISTER_CPU_OPERATOR(MaxPoolGradient, MaxPoolGradientOp);
REGISTER_CPU_OPERATOR(AveragePoolGradient, AveragePoolGradientOp);
REGISTER_CPU_OPERATOR(LpPoolGradient, LpPoolGradientOp);
REGISTER_GPU_FALLBACK(LpPoolGradient);  // CUDA runs the CPU kernel

OPERATOR_SCHEMA(MaxPool)
    .NumInputs(1)
    .NumOutputs(1)
    .TensorInference(PoolInference)
    .CostInference(PoolCost)
    .SetDoc(
        "Max over each window's in-bounds elements. The window is set like Conv's: kernel, "
        "stride, dilation and pads, each as a scalar for every spatial dim, an _h/_w pair for 2-D "
        "inputs or a list per spatial dim (forms given together must agree); global_pooling makes "
        "it the whole image.")
    .Arg("deterministic",
         "(bool, default 0) CUDNN engine: cuDNN's deterministic max pooling "
         "(CUDNN_POOLING_MAX_DETERMINISTIC)")
    .Input(0, "X", "(N, C, spatial...) or (N, spatial..., C)")
    .Output(0, "Y", "(N, C, out...) or (N, out..., C)");
OPERATOR_SCHEMA(AveragePool)
    .NumInputs(1)
    .NumOutputs(1)
    .TensorInference(PoolInference)
    .CostInference(PoolCost)
    .SetDoc(
        "Mean over each window's in-bounds elements (padding is not counted); the window "
        "arguments are MaxPool's.")
    .Input(0, "X", "(N, C, spatial...) or (N, spatial..., C)")
    .Output(0, "Y", "(N, C, out...) or (N, out..., C)");
OPERATOR_SCHEMA(LpPool)
    .NumInputs(1)
    .NumOutputs(1)
    .TensorInference(PoolInference)
    .CostInference(PoolCost)
    .Arg("p", "(float, default 2.0) the norm's exponent; must be positive")
    .SetDoc(
        "(sum of |x|^p over each window's in-bounds elements)^(1/p); the window arguments are "
        "MaxPool's.")
    .Input(0, "X", "(N, C, spatial...) or (N, spatial..., C)")
    .Output(0, "Y", "(N, C, out...) or (N, out..., C)");
OPERATOR_SCHEMA(MaxPoolGradient)
    .NumInputs(3)
    .NumOutputs(1)
    .IdenticalTypeAndShapeOfInput(0)
    .SetDoc("The gradient of MaxPool: [X, Y, dY] -> [dX], with MaxPool's args.")
    .Arg("deterministic",
         "(bool, default 0) CUDNN engine: cuDNN's deterministic max pooling "
         "(CUDNN_POOLING_MAX_DETERMINISTIC)");
OPERATOR_SCHEMA(AveragePoolGradient)
    .NumInputs(3)
    .NumOutputs(1)
    .IdenticalTypeAndShapeOfInput(0)
    .SetDoc("The gradient of AveragePool: [X, Y, dY] -> [dX], with AveragePool's args.");
OPERATOR_SCHEMA(LpPoolGradient)
    .NumInputs(3)
    .NumOutputs(1)
    .IdenticalTypeAndShapeOfInput(0)
    .SetDoc("The gradient of LpPool: [X, Y, dY] -> [dX], with LpPool's args.")
    .Arg("p", "(float, default 2.0) the forward op's exponent; must be positive");
// The window arguments of every pool op (conv_pool_schema.h).
static OpSchema& c2_max_pool_args [[maybe_unused]] = AddConvPoolArgs(c2_op_schema_MaxPool);
static OpSchema& c2_average_pool_args [[maybe_unused]] = AddConvPoolArgs(c2_op_schema_AveragePool);
static OpSchema& c2_lp_pool_args [[maybe_unused]] = AddConvPoolArgs(c2_op_schema_LpPool);
static OpSchema& c2_max_pool_gradient_args [[maybe_unused]] =
    AddConvPoolArgs(c2_op_schema_MaxPoolGradient);
static OpSchema& c2_average_pool_gradient_args [[maybe_unused]] =
    AddConvPoolArgs(c2_op_schema_AveragePoolGradient);
static OpSchema& c2_lp_pool_gradient_args [[maybe_unused]] =
    AddConvPoolArgs(c2_op_schema_LpPoolGradient);

REGISTER_GRADIENT(MaxPool, GetPoolGradient);
REGISTER_GRADIENT(AveragePool, GetPoolGradient);
REGISTER_GRADIENT(LpPool, GetPoolGradient);

// Upstream's names for the same ops, on every device and engine, with their schemas and gradients.
REGISTER_OPERATOR_ALIAS(MaxPool1D, MaxPool);
REGISTER_OPERATOR_ALIAS(MaxPool2D, MaxPool);
REGISTER_OPERATOR_ALIAS(MaxPool3D, MaxPool);
REGISTER_OPERATOR_ALIAS(AveragePool1D, AveragePool);
REGISTER_OPERATOR_ALIAS(AveragePool2D, AveragePool);
REGISTER_OPERATOR_ALIAS(AveragePool3D, AveragePool);

}  // namespace caffe2
