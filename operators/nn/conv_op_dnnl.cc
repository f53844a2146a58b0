#include "operators/nn/conv_op_dnnl.h"

#include <algorithm>
#include <functional>
#include <map>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "core/logging.h"
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

// The forward primitive description, with plain or oneDNN-chosen activation layouts; winograd asks
// for the Winograd algorithm (oneDNN has it for 3x3, stride-1 convolutions in blocked layouts).
dnnl::convolution_forward::primitive_desc ForwardDesc(const ConvDescs& d, bool blocked,
                                                      bool winograd = false) {
  using Conv = dnnl::convolution_forward;
  const memory::desc src = blocked ? Any(d.src) : d.src, dst = blocked ? Any(d.dst) : d.dst;
  const auto prop = dnnl::prop_kind::forward_training;
  const auto algo = winograd ? dnnl::algorithm::convolution_winograd
                             : dnnl::algorithm::convolution_direct;
  const Conv::desc desc = d.has_bias ? Conv::desc(prop, algo, src, Any(d.wei), d.bias, dst, d.strides, d.dilates,
                                                  d.pad_l, d.pad_r)
                                     : Conv::desc(prop, algo, src, Any(d.wei), dst, d.strides, d.dilates,
                                                  d.pad_l, d.pad_r);
  return Conv::primitive_desc(desc, DnnlEngine());
}

// One primitive and its bindings to the caller's tensors, numbered as below.
struct Pass {
  dnnl::primitive prim;
  std::vector<DnnlPlan::Binding> bindings;
  std::string impl;
};

// The caller's tensors: forward [X, W, bias, Y]; backward [X, W, dY, dW, dbias, dX].
enum { kX = 0, kW = 1, kBias = 2, kY = 3 };
enum { kBX = 0, kBW = 1, kBDY = 2, kBDW = 3, kBDBias = 4, kBDX = 5 };

std::vector<memory::desc> ForwardTensors(const ConvDescs& d) { return {d.src, d.wei, d.bias, d.dst}; }
std::vector<memory::desc> BackwardTensors(const ConvDescs& d) {
  return {d.src, d.wei, d.dst, d.wei, d.bias, d.src};
}

// Each builder returns false when oneDNN rejects the case or has only its reference kernel.
bool ForwardPass(const ConvDescs& d, bool blocked, Pass* pass, bool winograd = false) {
  try {
    const auto pd = ForwardDesc(d, blocked, winograd);
    if (DnnlIsReference(pd)) return false;
    pass->prim = dnnl::convolution_forward(pd);
    pass->impl = pd.impl_info_str();
    pass->bindings = {{DNNL_ARG_SRC, kX, pd.src_desc(), false}, {DNNL_ARG_WEIGHTS, kW, pd.weights_desc(), false},
                      {DNNL_ARG_DST, kY, pd.dst_desc(), true}};
    if (d.has_bias) pass->bindings.push_back({DNNL_ARG_BIAS, kBias, pd.bias_desc(), false});
    return true;
  } catch (const dnnl::error&) {
    return false;
  }
}

bool BackwardWeightsPass(const ConvDescs& d, bool blocked, Pass* pass, bool winograd = false) {
  using Conv = dnnl::convolution_backward_weights;
  try {
    const auto hint = ForwardDesc(d, blocked, winograd);
    const memory::desc src = blocked ? Any(d.src) : d.src, dst = blocked ? Any(d.dst) : d.dst;
    const auto algo = winograd ? dnnl::algorithm::convolution_winograd
                               : dnnl::algorithm::convolution_direct;
    const Conv::desc desc =
        d.has_bias ? Conv::desc(algo, src, Any(d.wei), d.bias, dst, d.strides, d.dilates, d.pad_l, d.pad_r)
                   : Conv::desc(algo, src, Any(d.wei), dst, d.strides, d.dilates, d.pad_l, d.pad_r);
    const Conv::primitive_desc pd(desc, DnnlEngine(), hint);
    if (DnnlIsReference(pd)) return false;
    pass->prim = Conv(pd);
    pass->impl = pd.impl_info_str();
    pass->bindings = {{DNNL_ARG_SRC, kBX, pd.src_desc(), false},
                      {DNNL_ARG_DIFF_DST, kBDY, pd.diff_dst_desc(), false},
                      {DNNL_ARG_DIFF_WEIGHTS, kBDW, pd.diff_weights_desc(), true}};
    if (d.has_bias) pass->bindings.push_back({DNNL_ARG_DIFF_BIAS, kBDBias, pd.diff_bias_desc(), true});
    return true;
  } catch (const dnnl::error&) {
    return false;
  }
}

bool BackwardDataPass(const ConvDescs& d, bool blocked, Pass* pass, bool winograd = false) {
  using Conv = dnnl::convolution_backward_data;
  try {
    const auto hint = ForwardDesc(d, blocked, winograd);
    const memory::desc src = blocked ? Any(d.src) : d.src, dst = blocked ? Any(d.dst) : d.dst;
    const auto algo = winograd ? dnnl::algorithm::convolution_winograd
                               : dnnl::algorithm::convolution_direct;
    const Conv::desc desc(algo, src, Any(d.wei), dst, d.strides, d.dilates, d.pad_l, d.pad_r);
    const Conv::primitive_desc pd(desc, DnnlEngine(), hint);
    if (DnnlIsReference(pd)) return false;
    pass->prim = Conv(pd);
    pass->impl = pd.impl_info_str();
    pass->bindings = {{DNNL_ARG_DIFF_DST, kBDY, pd.diff_dst_desc(), false},
                      {DNNL_ARG_WEIGHTS, kBW, pd.weights_desc(), false},
                      {DNNL_ARG_DIFF_SRC, kBDX, pd.diff_src_desc(), true}};
    return true;
  } catch (const dnnl::error&) {
    return false;
  }
}

// The variants of one pass that oneDNN offers (plain layouts, blocked layouts, and for the forward
// pass Winograd), by name.
struct Candidates {
  std::vector<std::pair<std::string, Pass>> options;
  bool any() const { return !options.empty(); }
  void Add(const char* name, const std::function<bool(Pass*)>& make) {
    Pass p;
    if (make(&p)) options.emplace_back(name, std::move(p));
  }
};

template <class Make>
Candidates Build(const Make& make) {
  Candidates c;
  c.Add("plain layouts", [&](Pass* p) { return make(false, p); });
  c.Add("blocked", [&](Pass* p) { return make(true, p); });
  return c;
}

// The fastest variant on this call's data, each timed alone (logged at INFO). Alternating runs, the
// fastest of each counting: the machine may be busy with other work in bursts. The first run of each
// also faults in its scratch memory.
Pass Pick(const Candidates& c, const char* what, const std::vector<memory::desc>& tensors,
          const std::vector<void*>& data) {
  if (c.options.size() == 1) return c.options.front().second;
  std::vector<DnnlPlan> plans;
  std::vector<double> best;
  for (const auto& option : c.options) {
    plans.emplace_back(tensors);
    plans.back().Add(option.second.prim, option.second.bindings);
    best.push_back(plans.back().Time(data));
  }
  for (int i = 0; i < 2; ++i) {
    for (size_t j = 0; j < plans.size(); ++j) best[j] = std::min(best[j], plans[j].Time(data));
  }
  size_t pick = 0;
  std::ostringstream log;
  for (size_t j = 0; j < plans.size(); ++j) {
    log << (j ? ", " : "") << c.options[j].first << " " << best[j] * 1e3 << " ms ("
        << c.options[j].second.impl << ")";
    if (best[j] < best[pick]) pick = j;
  }
  C2_LOG(Info) << "oneDNN " << what << ": " << log.str();
  return c.options[pick].second;
}

enum PassKind : int64_t { kForward = 0, kBackward = 1, kBackwardNoDX = 2 };

struct Entry {
  bool ok = false;
  DnnlPlan plan;
};

std::vector<int64_t> Key(PassKind kind, const ConvPoolGeometry& g, int64_t M, int group, bool has_bias) {
  std::vector<int64_t> key{kind, g.N, g.C, M, group, has_bias, g.spatial_dims()};
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
  const std::vector<void*> data{Ptr(x), Ptr(w), Ptr(bias), y};
  auto& cache = Cache();
  const auto key = Key(kForward, g, M, group, bias != nullptr);
  auto it = cache.find(key);
  if (it == cache.end()) {
    const ConvDescs d = Describe(g, M, group, bias != nullptr);
    Entry e;
    Candidates c = Build([&](bool blocked, Pass* p) { return ForwardPass(d, blocked, p); });
    c.Add("winograd", [&](Pass* p) { return ForwardPass(d, true, p, true); });
    e.ok = c.any();
    if (e.ok) {
      const auto tensors = ForwardTensors(d);
      const Pass pass = Pick(c, "forward", tensors, data);
      e.plan = DnnlPlan(tensors);
      e.plan.Add(pass.prim, pass.bindings);
    }
    it = cache.emplace(key, std::move(e)).first;
  }
  if (!it->second.ok) return false;
  it->second.plan.Run(data);
  return true;
}

bool DnnlConvBackward(const ConvPoolGeometry& g, int64_t M, int group, const float* x, const float* w,
                      const float* dy, float* dw, float* dbias, float* dx) {
  if (g.order != StorageOrder::NCHW || g.spatial_dims() < 1 || g.spatial_dims() > 3) return false;
  const std::vector<void*> data{Ptr(x), Ptr(w), Ptr(dy), dw, dbias, dx};
  auto& cache = Cache();
  const auto key = Key(dx ? kBackward : kBackwardNoDX, g, M, group, dbias != nullptr);
  auto it = cache.find(key);
  if (it == cache.end()) {
    const ConvDescs d = Describe(g, M, group, dbias != nullptr);
    Entry e;
    // Both passes must be possible before either runs: the caller's fallback expects untouched outputs.
    Candidates cw = Build([&](bool blocked, Pass* p) { return BackwardWeightsPass(d, blocked, p); });
    cw.Add("winograd", [&](Pass* p) { return BackwardWeightsPass(d, true, p, true); });
    Candidates cd;
    if (dx) {
      cd = Build([&](bool blocked, Pass* p) { return BackwardDataPass(d, blocked, p); });
      cd.Add("winograd", [&](Pass* p) { return BackwardDataPass(d, true, p, true); });
    }
    e.ok = cw.any() && (!dx || cd.any());
    if (e.ok) {
      const auto tensors = BackwardTensors(d);
      e.plan = DnnlPlan(tensors);
      const Pass weights = Pick(cw, "backward weights", tensors, data);
      e.plan.Add(weights.prim, weights.bindings);
      if (dx) {
        const Pass data_pass = Pick(cd, "backward data", tensors, data);
        e.plan.Add(data_pass.prim, data_pass.bindings);
      }
    }
    it = cache.emplace(key, std::move(e)).first;
  }
  if (!it->second.ok) return false;
  it->second.plan.Run(data);
  return true;
}

}  // namespace caffe2
