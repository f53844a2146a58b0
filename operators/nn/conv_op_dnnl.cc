#include "operators/nn/conv_op_dnnl.h"

#include <algorithm>
#include <map>
#include <vector>

#include "operators/common/dnnl_context.h"

namespace caffe2 {
namespace {

using dnnl::memory;
using Tag = memory::format_tag;

// The plain (caller's) layouts and the window arguments of one call, in oneDNN's terms.
struct ConvDescs {
  memory::desc src, wei, bias, dst;
  memory::dims strides, dilates, pad_l, pad_r;
  bool has_bias = false;
};

ConvDescs Describe(const ConvPoolGeometry& g, int64_t M, int group, bool has_bias) {
  static const Tag kAct[] = {Tag::ncw, Tag::nchw, Tag::ncdhw};
  static const Tag kWei[] = {Tag::oiw, Tag::oihw, Tag::oidhw};
  static const Tag kGroupWei[] = {Tag::goiw, Tag::goihw, Tag::goidhw};
  const int nd = g.spatial_dims();
  ConvDescs d;
  memory::dims src{g.N, g.C}, dst{g.N, M};
  memory::dims wei = group > 1 ? memory::dims{group, M / group, g.C / group} : memory::dims{M, g.C};
  for (int i = 0; i < nd; ++i) {
    src.push_back(g.in[i]);
    dst.push_back(g.out[i]);
    wei.push_back(g.kernel[i]);
    d.strides.push_back(g.stride[i]);
    d.dilates.push_back(g.dilation[i] - 1);  // oneDNN counts the gaps
    d.pad_l.push_back(g.pad_head[i]);
    d.pad_r.push_back(g.pad_tail[i]);
  }
  const auto f32 = memory::data_type::f32;
  d.src = memory::desc(src, f32, kAct[nd - 1]);
  d.dst = memory::desc(dst, f32, kAct[nd - 1]);
  d.wei = memory::desc(wei, f32, group > 1 ? kGroupWei[nd - 1] : kWei[nd - 1]);
  d.bias = memory::desc({M}, f32, Tag::x);
  d.has_bias = has_bias;
  return d;
}

memory::desc Any(const memory::desc& d) { return memory::desc(d.dims(), memory::data_type::f32, Tag::any); }

// The forward primitive description, with plain or oneDNN-chosen activation layouts.
dnnl::convolution_forward::primitive_desc ForwardDesc(const ConvDescs& d, bool blocked) {
  using Conv = dnnl::convolution_forward;
  const memory::desc src = blocked ? Any(d.src) : d.src, dst = blocked ? Any(d.dst) : d.dst;
  const auto prop = dnnl::prop_kind::forward_training;
  const auto algo = dnnl::algorithm::convolution_direct;
  const Conv::desc desc = d.has_bias ? Conv::desc(prop, algo, src, Any(d.wei), d.bias, dst, d.strides, d.dilates,
                                                  d.pad_l, d.pad_r)
                                     : Conv::desc(prop, algo, src, Any(d.wei), dst, d.strides, d.dilates,
                                                  d.pad_l, d.pad_r);
  return Conv::primitive_desc(desc, DnnlEngine());
}

// Each builder returns an invalid plan when oneDNN rejects the case or has only its reference kernel.
// Argument order of the plans: forward (src, weights, bias?, dst), backward weights (src, diff_dst,
// diff_weights, diff_bias?), backward data (diff_dst, weights, diff_src).
DnnlPlan ForwardPlan(const ConvDescs& d, bool blocked) {
  try {
    const auto pd = ForwardDesc(d, blocked);
    if (DnnlIsReference(pd)) return {};
    DnnlPlan plan{dnnl::convolution_forward(pd)};
    plan.AddInput(DNNL_ARG_SRC, d.src, pd.src_desc());
    plan.AddInput(DNNL_ARG_WEIGHTS, d.wei, pd.weights_desc());
    if (d.has_bias) plan.AddInput(DNNL_ARG_BIAS, d.bias, pd.bias_desc());
    plan.AddOutput(DNNL_ARG_DST, d.dst, pd.dst_desc());
    return plan;
  } catch (const dnnl::error&) {
    return {};
  }
}

DnnlPlan BackwardWeightsPlan(const ConvDescs& d, bool blocked) {
  using Conv = dnnl::convolution_backward_weights;
  try {
    const auto hint = ForwardDesc(d, blocked);
    const memory::desc src = blocked ? Any(d.src) : d.src, dst = blocked ? Any(d.dst) : d.dst;
    const auto algo = dnnl::algorithm::convolution_direct;
    const Conv::desc desc =
        d.has_bias ? Conv::desc(algo, src, Any(d.wei), d.bias, dst, d.strides, d.dilates, d.pad_l, d.pad_r)
                   : Conv::desc(algo, src, Any(d.wei), dst, d.strides, d.dilates, d.pad_l, d.pad_r);
    const Conv::primitive_desc pd(desc, DnnlEngine(), hint);
    if (DnnlIsReference(pd)) return {};
    DnnlPlan plan{Conv(pd)};
    plan.AddInput(DNNL_ARG_SRC, d.src, pd.src_desc());
    plan.AddInput(DNNL_ARG_DIFF_DST, d.dst, pd.diff_dst_desc());
    plan.AddOutput(DNNL_ARG_DIFF_WEIGHTS, d.wei, pd.diff_weights_desc());
    if (d.has_bias) plan.AddOutput(DNNL_ARG_DIFF_BIAS, d.bias, pd.diff_bias_desc());
    return plan;
  } catch (const dnnl::error&) {
    return {};
  }
}

DnnlPlan BackwardDataPlan(const ConvDescs& d, bool blocked) {
  using Conv = dnnl::convolution_backward_data;
  try {
    const auto hint = ForwardDesc(d, blocked);
    const memory::desc src = blocked ? Any(d.src) : d.src, dst = blocked ? Any(d.dst) : d.dst;
    const Conv::desc desc(dnnl::algorithm::convolution_direct, src, Any(d.wei), dst, d.strides, d.dilates,
                          d.pad_l, d.pad_r);
    const Conv::primitive_desc pd(desc, DnnlEngine(), hint);
    if (DnnlIsReference(pd)) return {};
    DnnlPlan plan{Conv(pd)};
    plan.AddInput(DNNL_ARG_DIFF_DST, d.dst, pd.diff_dst_desc());
    plan.AddInput(DNNL_ARG_WEIGHTS, d.wei, pd.weights_desc());
    plan.AddOutput(DNNL_ARG_DIFF_SRC, d.src, pd.diff_src_desc());
    return plan;
  } catch (const dnnl::error&) {
    return {};
  }
}

// Both candidates of one pass; `Pick` keeps the faster on this call's data.
struct Candidates {
  DnnlPlan plain, blocked;
  bool valid() const { return plain.valid() || blocked.valid(); }
};

template <class Make>
Candidates Build(const Make& make) {
  return {make(false), make(true)};
}

DnnlPlan Pick(Candidates c, const std::vector<void*>& data) {
  if (!c.plain.valid()) return c.blocked;
  if (!c.blocked.valid()) return c.plain;
  // Alternating runs, the fastest of each counting: the machine may be busy with other work in
  // bursts. The first run of each also faults in its scratch memory; big cases get one run less.
  double plain = c.plain.Time(data, 1), blocked = c.blocked.Time(data, 1);
  const int reps = plain + blocked > 0.2 ? 1 : 2;
  for (int i = 0; i < reps; ++i) {
    plain = std::min(plain, c.plain.Time(data, 1));
    blocked = std::min(blocked, c.blocked.Time(data, 1));
  }
  return plain <= blocked ? c.plain : c.blocked;
}

enum Pass : int64_t { kForward = 0, kBackward = 1, kBackwardNoDX = 2 };

struct Entry {
  bool ok = false;
  DnnlPlan first, second;  // forward; or backward weights and backward data
};

std::vector<int64_t> Key(Pass pass, const ConvPoolGeometry& g, int64_t M, int group, bool has_bias) {
  std::vector<int64_t> key{pass, g.N, g.C, M, group, has_bias, g.spatial_dims()};
  for (int i = 0; i < g.spatial_dims(); ++i) {
    key.insert(key.end(), {g.in[i], g.kernel[i], g.stride[i], g.dilation[i], g.pad_head[i], g.pad_tail[i]});
  }
  return key;
}

std::map<std::vector<int64_t>, Entry>& Cache() {
  thread_local std::map<std::vector<int64_t>, Entry> cache;
  return cache;
}

void* Ptr(const float* p) { return const_cast<float*>(p); }

}  // namespace

bool DnnlConvForward(const ConvPoolGeometry& g, int64_t M, int group, const float* x, const float* w,
                     const float* bias, float* y) {
  if (g.order != StorageOrder::NCHW || g.spatial_dims() < 1 || g.spatial_dims() > 3) return false;
  std::vector<void*> data{Ptr(x), Ptr(w)};
  if (bias) data.push_back(Ptr(bias));
  data.push_back(y);
  auto& cache = Cache();
  const auto key = Key(kForward, g, M, group, bias != nullptr);
  auto it = cache.find(key);
  if (it == cache.end()) {
    const ConvDescs d = Describe(g, M, group, bias != nullptr);
    Entry e;
    Candidates c = Build([&](bool blocked) { return ForwardPlan(d, blocked); });
    e.ok = c.valid();
    if (e.ok) e.first = Pick(std::move(c), data);
    it = cache.emplace(key, std::move(e)).first;
  }
  if (!it->second.ok) return false;
  it->second.first.Run(data);
  return true;
}

bool DnnlConvBackward(const ConvPoolGeometry& g, int64_t M, int group, const float* x, const float* w,
                      const float* dy, float* dw, float* dbias, float* dx) {
  if (g.order != StorageOrder::NCHW || g.spatial_dims() < 1 || g.spatial_dims() > 3) return false;
  std::vector<void*> weights_data{Ptr(x), Ptr(dy), dw};
  if (dbias) weights_data.push_back(dbias);
  const std::vector<void*> data_data{Ptr(dy), Ptr(w), dx};
  auto& cache = Cache();
  const auto key = Key(dx ? kBackward : kBackwardNoDX, g, M, group, dbias != nullptr);
  auto it = cache.find(key);
  if (it == cache.end()) {
    const ConvDescs d = Describe(g, M, group, dbias != nullptr);
    Entry e;
    // Both passes must be possible before either runs: the caller's fallback expects untouched outputs.
    Candidates cw = Build([&](bool blocked) { return BackwardWeightsPlan(d, blocked); });
    Candidates cd;
    if (dx) cd = Build([&](bool blocked) { return BackwardDataPlan(d, blocked); });
    e.ok = cw.valid() && (!dx || cd.valid());
    if (e.ok) {
      e.first = Pick(std::move(cw), weights_data);
      if (dx) e.second = Pick(std::move(cd), data_data);
    }
    it = cache.emplace(key, std::move(e)).first;
  }
  if (!it->second.ok) return false;
  it->second.first.Run(weights_data);
  if (dx) it->second.second.Run(data_data);
  return true;
}

}  // namespace caffe2
