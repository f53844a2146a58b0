#include "operators/conv/conv_op_dnnl.h"

#include <algorithm>
#include <chrono>
#include <functional>
#include <limits>
#include <map>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "core/autotune_cache.h"
#include "core/logging.h"
#include "operators/common/dnnl_context.h"
#include "operators/common/parallel_for.h"
#include "operators/conv/conv_dnnl_descs.h"
#include "operators/conv/conv_policy.h"

namespace caffe2 {
namespace {

using dnnl::memory;
using Tag = memory::format_tag;

memory::desc Any(const memory::desc& d) {
  return memory::desc(d.dims(), memory::data_type::f32, Tag::any);
}

dnnl::algorithm Algorithm(ConvVariant v) {
  return v == ConvVariant::kWinograd ? dnnl::algorithm::convolution_winograd
                                     : dnnl::algorithm::convolution_direct;
}

// The forward primitive description of a oneDNN variant: plain layouts (direct) or oneDNN's choice
// (blocked, winograd). Filters always take oneDNN's preferred layout.
dnnl::convolution_forward::primitive_desc ForwardDesc(const ConvDescs& d, ConvVariant v,
                                                      bool relu = false) {
  using Conv = dnnl::convolution_forward;
  const bool plain = v == ConvVariant::kDirect;
  const memory::desc src = plain ? d.src : Any(d.src), dst = plain ? d.dst : Any(d.dst);
  const auto prop = dnnl::prop_kind::forward_training;
  const Conv::desc desc = d.has_bias ? Conv::desc(prop, Algorithm(v), src, Any(d.wei), d.bias, dst,
                                                  d.strides, d.dilates, d.pad_l, d.pad_r)
                                     : Conv::desc(prop, Algorithm(v), src, Any(d.wei), dst,
                                                  d.strides, d.dilates, d.pad_l, d.pad_r);
  if (!relu) return Conv::primitive_desc(desc, DnnlEngine());
  dnnl::post_ops ops;
  ops.append_eltwise(1.f, dnnl::algorithm::eltwise_relu, 0.f, 0.f);
  dnnl::primitive_attr attr;
  attr.set_post_ops(ops);
  return Conv::primitive_desc(desc, attr, DnnlEngine());
}

// One primitive and its bindings to the caller's tensors, numbered as below.
struct Pass {
  dnnl::primitive prim;
  std::vector<DnnlPlan::Binding> bindings;
};

// The caller's tensors: forward [X, W, bias, Y]; backward [X, W, dY, dW, dbias, dX].
enum { kX = 0, kW = 1, kBias = 2, kY = 3 };
enum { kBX = 0, kBW = 1, kBDY = 2, kBDW = 3, kBDBias = 4, kBDX = 5 };

std::vector<memory::desc> ForwardTensors(const ConvDescs& d) {
  return {d.src, d.wei, d.bias, d.dst};
}
std::vector<memory::desc> BackwardTensors(const ConvDescs& d) {
  return {d.src, d.wei, d.dst, d.wei, d.bias, d.src};
}

// Each builder returns false when oneDNN rejects the variant or has only its reference kernel for
// it.
bool ForwardPass(const ConvDescs& d, ConvVariant v, bool relu, Pass* pass) {
  try {
    const auto pd = ForwardDesc(d, v, relu);
    if (DnnlIsReference(pd)) return false;
    pass->prim = dnnl::convolution_forward(pd);
    pass->bindings = {{DNNL_ARG_SRC, kX, pd.src_desc(), false},
                      {DNNL_ARG_WEIGHTS, kW, pd.weights_desc(), false},
                      {DNNL_ARG_DST, kY, pd.dst_desc(), true}};
    if (d.has_bias) pass->bindings.push_back({DNNL_ARG_BIAS, kBias, pd.bias_desc(), false});
    return true;
  } catch (const dnnl::error&) {
    return false;
  }
}

bool BackwardWeightsPass(const ConvDescs& d, ConvVariant v, Pass* pass) {
  using Conv = dnnl::convolution_backward_weights;
  try {
    const auto hint = ForwardDesc(d, v);
    const bool plain = v == ConvVariant::kDirect;
    const memory::desc src = plain ? d.src : Any(d.src), dst = plain ? d.dst : Any(d.dst);
    const Conv::desc desc = d.has_bias ? Conv::desc(Algorithm(v), src, Any(d.wei), d.bias, dst,
                                                    d.strides, d.dilates, d.pad_l, d.pad_r)
                                       : Conv::desc(Algorithm(v), src, Any(d.wei), dst, d.strides,
                                                    d.dilates, d.pad_l, d.pad_r);
    const Conv::primitive_desc pd(desc, DnnlEngine(), hint);
    if (DnnlIsReference(pd)) return false;
    pass->prim = Conv(pd);
    pass->bindings = {{DNNL_ARG_SRC, kBX, pd.src_desc(), false},
                      {DNNL_ARG_DIFF_DST, kBDY, pd.diff_dst_desc(), false},
                      {DNNL_ARG_DIFF_WEIGHTS, kBDW, pd.diff_weights_desc(), true}};
    if (d.has_bias)
      pass->bindings.push_back({DNNL_ARG_DIFF_BIAS, kBDBias, pd.diff_bias_desc(), true});
    return true;
  } catch (const dnnl::error&) {
    return false;
  }
}

bool BackwardDataPass(const ConvDescs& d, ConvVariant v, Pass* pass) {
  using Conv = dnnl::convolution_backward_data;
  try {
    const auto hint = ForwardDesc(d, v);
    const bool plain = v == ConvVariant::kDirect;
    const memory::desc src = plain ? d.src : Any(d.src), dst = plain ? d.dst : Any(d.dst);
    const Conv::desc desc(Algorithm(v), src, Any(d.wei), dst, d.strides, d.dilates, d.pad_l,
                          d.pad_r);
    const Conv::primitive_desc pd(desc, DnnlEngine(), hint);
    if (DnnlIsReference(pd)) return false;
    pass->prim = Conv(pd);
    pass->bindings = {{DNNL_ARG_DIFF_DST, kBDY, pd.diff_dst_desc(), false},
                      {DNNL_ARG_WEIGHTS, kBW, pd.weights_desc(), false},
                      {DNNL_ARG_DIFF_SRC, kBDX, pd.diff_src_desc(), true}};
    return true;
  } catch (const dnnl::error&) {
    return false;
  }
}

const ConvVariant kDnnlVariants[] = {ConvVariant::kDirect, ConvVariant::kBlocked,
                                     ConvVariant::kWinograd};

// The oneDNN variants of one pass that this machine's oneDNN offers for the case.
struct Passes {
  std::map<ConvVariant, Pass> by_variant;
  ConvOffer offer;

  template <class Build>
  explicit Passes(const Build& build) {
    for (ConvVariant v : kDnnlVariants) {
      Pass p;
      if (build(v, &p)) by_variant.emplace(v, std::move(p));
    }
    offer.direct = by_variant.count(ConvVariant::kDirect) > 0;
    offer.blocked = by_variant.count(ConvVariant::kBlocked) > 0;
    offer.winograd = by_variant.count(ConvVariant::kWinograd) > 0;
  }
  const Pass& at(ConvVariant v) const { return by_variant.at(v); }
};

// The autotune key of a case: the pass, the kernel threads and every dim and argument.
std::string CaseKey(const char* pass, const ConvShape& s, bool bias) {
  std::ostringstream k;
  k << "conv_dnnl." << pass << " t" << MaxKernelThreads() << " N" << s.N << " C" << s.C << " M"
    << s.M << " g" << s.group << " b" << bias;
  const ConvPoolGeometry& g = s.g;
  for (int i = 0; i < g.spatial_dims(); ++i) {
    k << " " << g.in[i] << ":k" << g.kernel[i] << "s" << g.stride[i] << "d" << g.dilation[i] << "p"
      << g.pad_head[i] << "," << g.pad_tail[i];
  }
  return k.str();
}

// Runs each option `rounds` times, alternating, and returns the index of the fastest (its best run
// counting: the machine may be busy in bursts). Logged at INFO.
size_t Fastest(const std::string& key, const std::vector<std::string>& names,
               const std::function<double(size_t)>& time_once) {
  std::vector<double> best(names.size(), std::numeric_limits<double>::infinity());
  for (int round = 0; round < 3; ++round) {
    for (size_t i = 0; i < names.size(); ++i) best[i] = std::min(best[i], time_once(i));
  }
  const size_t pick = std::min_element(best.begin(), best.end()) - best.begin();
  std::ostringstream log;
  for (size_t i = 0; i < names.size(); ++i)
    log << (i ? ", " : "") << names[i] << " " << best[i] * 1e3 << " ms";
  C2_LOG(Info) << "timed " << key << ": " << log.str() << "; fastest " << names[pick];
  return pick;
}

// Records a timed choice and returns the recorded one: when threads or processes tune the same case
// at once, all of them go on with the first recorded choice.
std::string RecordChoice(const std::string& key, const std::string& mine) {
  AutotuneRecord(key, mine);
  return AutotuneLookup(key).value_or(mine);
}

double Seconds(const std::function<void()>& f) {
  const auto start = std::chrono::steady_clock::now();
  f();
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

// One case's plan on this thread: gemm (the default engine's path) or a oneDNN plan.
struct Entry {
  bool gemm = true;
  DnnlPlan plan;
};

// This thread's plans, dropped when the autotune records in force change.
std::map<std::string, Entry>& Cache() {
  thread_local std::map<std::string, Entry> cache;
  thread_local uint64_t generation = 0;
  const uint64_t now = AutotuneGeneration();
  if (now != generation) {
    cache.clear();
    generation = now;
  }
  return cache;
}

void* Ptr(const float* p) { return const_cast<float*>(p); }

DnnlPlan PlanOf(const std::vector<memory::desc>& tensors, const std::vector<const Pass*>& passes) {
  DnnlPlan plan(tensors);
  for (const Pass* p : passes) plan.Add(p->prim, p->bindings);
  return plan;
}

}  // namespace

DnnlConvOp::DnnlConvOp(const OperatorDef& def, Workspace* ws, bool relu)
    : ConvOp(def, ws, relu),
      exhaustive_search_(
          ExhaustiveSearchEnabled(GetSingleArgument<bool>("exhaustive_search", false))) {
  if (args().order() != StorageOrder::NCHW)
    throw UnsupportedOperatorFeature("the DNNL engine runs NCHW only");
}

void DnnlConvOp::Compute(const ConvShape& s, const float* x, const float* w, const float* bias,
                         float* y) {
  const std::vector<void*> data{Ptr(x), Ptr(w), Ptr(bias), y};
  const std::string key = CaseKey(relu() ? "forward_relu" : "forward", s, bias != nullptr);
  auto& cache = Cache();
  auto it = cache.find(key);
  if (it == cache.end()) {
    const ConvDescs d = Describe(s.g, s.M, s.group, bias != nullptr);
    const Passes passes([&](ConvVariant v, Pass* p) { return ForwardPass(d, v, relu(), p); });
    const auto tensors = ForwardTensors(d);
    auto valid = [&](const std::string& name) {
      const auto v = ParseConvVariant(name);
      return v && (*v == ConvVariant::kGemm || passes.offer.Has(*v));
    };
    std::string choice;
    if (auto recorded = AutotuneLookup(key); recorded && valid(*recorded)) {
      choice = *recorded;
    } else if (exhaustive_search_ && !passes.by_variant.empty()) {
      std::vector<std::string> names{ConvVariantName(ConvVariant::kGemm)};
      std::vector<DnnlPlan> plans(1);
      for (const auto& kv : passes.by_variant) {
        names.push_back(ConvVariantName(kv.first));
        plans.push_back(PlanOf(tensors, {&kv.second}));
      }
      const size_t pick = Fastest(key, names, [&](size_t i) {
        return i == 0 ? Seconds([&] { GemmForward(s, x, w, bias, y); }) : plans[i].Time(data);
      });
      choice = RecordChoice(key, names[pick]);
    } else {
      choice = ConvVariantName(ConvForwardRule(s, passes.offer));
    }
    Entry e;
    const ConvVariant v = *ParseConvVariant(choice);
    e.gemm = v == ConvVariant::kGemm;
    if (!e.gemm) e.plan = PlanOf(tensors, {&passes.at(v)});
    C2_LOG(Info) << "Conv (DNNL) " << key << ": " << choice;
    it = cache.emplace(key, std::move(e)).first;
  }
  if (it->second.gemm) {
    GemmForward(s, x, w, bias, y);
  } else {
    it->second.plan.Run(data);
  }
}

void DnnlConvOp::GemmForward(const ConvShape& s, const float* x, const float* w, const float* bias,
                             float* y) {
  ConvOp::Compute(s, x, w, bias, y);
  if (relu()) ReluInPlace(y, s.N * s.M * s.P);
}

DnnlConvGradientOp::DnnlConvGradientOp(const OperatorDef& def, Workspace* ws)
    : ConvGradientOp(def, ws),
      exhaustive_search_(
          ExhaustiveSearchEnabled(GetSingleArgument<bool>("exhaustive_search", false))) {
  if (args().order() != StorageOrder::NCHW)
    throw UnsupportedOperatorFeature("the DNNL engine runs NCHW only");
}

void DnnlConvGradientOp::Compute(const ConvShape& s, const float* x, const float* w,
                                 const float* dy, float* dw, float* db, float* dx) {
  const std::vector<void*> data{Ptr(x), Ptr(w), Ptr(dy), dw, db, dx};
  const bool with_dx = dx != nullptr;
  const std::string key = CaseKey(with_dx ? "backward" : "backward_no_dx", s, db != nullptr);
  auto& cache = Cache();
  auto it = cache.find(key);
  if (it == cache.end()) {
    const ConvDescs d = Describe(s.g, s.M, s.group, db != nullptr);
    const Passes weights([&](ConvVariant v, Pass* p) { return BackwardWeightsPass(d, v, p); });
    const Passes data_passes(
        [&](ConvVariant v, Pass* p) { return with_dx && BackwardDataPass(d, v, p); });
    const bool dnnl_possible =
        !weights.by_variant.empty() && (!with_dx || !data_passes.by_variant.empty());
    const auto tensors = BackwardTensors(d);
    auto valid = [&](const std::string& name) {
      const auto c = ParseConvBackwardChoice(name, with_dx);
      if (!c) return false;
      if (c->weights == ConvVariant::kGemm) return true;
      return weights.offer.Has(c->weights) && (!with_dx || data_passes.offer.Has(c->data));
    };
    std::string choice;
    if (auto recorded = AutotuneLookup(key); recorded && valid(*recorded)) {
      choice = *recorded;
    } else if (exhaustive_search_ && dnnl_possible) {
      // The fastest oneDNN variant of each pass alone, then the two together against gemm.
      auto fastest_of = [&](const Passes& passes, const char* pass) {
        std::vector<std::string> names;
        std::vector<DnnlPlan> plans;
        std::vector<ConvVariant> variants;
        for (const auto& kv : passes.by_variant) {
          names.push_back(ConvVariantName(kv.first));
          plans.push_back(PlanOf(tensors, {&kv.second}));
          variants.push_back(kv.first);
        }
        if (variants.size() == 1) return variants[0];
        return variants[Fastest(key + " " + pass, names,
                                [&](size_t i) { return plans[i].Time(data); })];
      };
      ConvBackwardChoice best;
      best.weights = fastest_of(weights, "weights");
      if (with_dx) best.data = fastest_of(data_passes, "data");
      std::vector<const Pass*> parts{&weights.at(best.weights)};
      if (with_dx) parts.push_back(&data_passes.at(best.data));
      DnnlPlan together = PlanOf(tensors, parts);
      const std::vector<std::string> names{"gemm", ConvBackwardChoiceName(best, with_dx)};
      const size_t pick = Fastest(key, names, [&](size_t i) {
        return i == 0 ? Seconds([&] { ConvGradientOp::Compute(s, x, w, dy, dw, db, dx); })
                      : together.Time(data);
      });
      choice = RecordChoice(key, names[pick]);
    } else if (dnnl_possible) {
      choice = ConvBackwardChoiceName(
          ConvBackwardRule(s, weights.offer, data_passes.offer, with_dx), with_dx);
    } else {
      choice = "gemm";
    }
    Entry e;
    const ConvBackwardChoice c = *ParseConvBackwardChoice(choice, with_dx);
    e.gemm = c.weights == ConvVariant::kGemm;
    if (!e.gemm) {
      std::vector<const Pass*> parts{&weights.at(c.weights)};
      if (with_dx) parts.push_back(&data_passes.at(c.data));
      e.plan = PlanOf(tensors, parts);
    }
    C2_LOG(Info) << "ConvGradient (DNNL) " << key << ": " << choice;
    it = cache.emplace(key, std::move(e)).first;
  }
  if (it->second.gemm) {
    ConvGradientOp::Compute(s, x, w, dy, dw, db, dx);
  } else {
    it->second.plan.Run(data);
  }
}

REGISTER_CPU_OPERATOR(Conv_ENGINE_DNNL, DnnlConvOp);
REGISTER_CPU_OPERATOR(ConvGradient_ENGINE_DNNL, DnnlConvGradientOp);

}  // namespace caffe2
