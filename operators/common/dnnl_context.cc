#include "operators/common/dnnl_context.h"

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstring>

#include "operators/common/scratch_buffer.h"

namespace caffe2 {

bool DnnlEnabled() { return true; }

dnnl::engine& DnnlEngine() {
  // Never destroyed: kernels may run during static destruction.
  static dnnl::engine* engine = new dnnl::engine(dnnl::engine::kind::cpu, 0);
  return *engine;
}

dnnl::stream& DnnlStream() {
  thread_local dnnl::stream stream(DnnlEngine());
  return stream;
}

bool DnnlIsReference(const dnnl::primitive_desc_base& pd) {
  return std::strncmp(pd.impl_info_str(), "ref", 3) == 0;
}

namespace {

// Floats for one reordered argument, rounded up to whole 64-byte lines.
size_t Floats(const dnnl::memory::desc& d) { return (d.get_size() / sizeof(float) + 15) / 16 * 16; }

}  // namespace

void DnnlPlan::Add(int arg, bool output, const dnnl::memory::desc& user, const dnnl::memory::desc& inner) {
  Arg a{arg, output, dnnl::memory(user, DnnlEngine(), DNNL_MEMORY_NONE), {}, {}};
  if (inner == user) {
    a.inner = a.user;
  } else {
    a.inner = dnnl::memory(inner, DnnlEngine(), DNNL_MEMORY_NONE);
    a.reorder = output ? dnnl::reorder(a.inner, a.user) : dnnl::reorder(a.user, a.inner);
  }
  exec_args_[arg] = a.inner;
  args_.push_back(std::move(a));
}

void DnnlPlan::AddInput(int arg, const dnnl::memory::desc& user, const dnnl::memory::desc& inner) {
  Add(arg, false, user, inner);
}

void DnnlPlan::AddOutput(int arg, const dnnl::memory::desc& user, const dnnl::memory::desc& inner) {
  Add(arg, true, user, inner);
}

size_t DnnlPlan::scratch_floats() const {
  size_t n = 0;
  for (const Arg& a : args_) {
    if (a.reorder) n += Floats(a.inner.get_desc());
  }
  return n;
}

void DnnlPlan::Run(const std::vector<void*>& data) {
  const size_t scratch_size = scratch_floats();
  // 16 extra floats to align the first piece to 64 bytes.
  ScratchBuffer scratch(scratch_size ? scratch_size + 16 : 0);
  float* next = nullptr;
  if (scratch_size) {
    const uintptr_t p = reinterpret_cast<uintptr_t>(scratch.data());
    next = reinterpret_cast<float*>((p + 63) / 64 * 64);
  }
  dnnl::stream& stream = DnnlStream();
  for (size_t i = 0; i < args_.size(); ++i) {
    Arg& a = args_[i];
    a.user.set_data_handle(data.at(i));
    if (!a.reorder) continue;
    a.inner.set_data_handle(next);
    next += Floats(a.inner.get_desc());
    if (!a.output) a.reorder.execute(stream, {{DNNL_ARG_FROM, a.user}, {DNNL_ARG_TO, a.inner}});
  }
  prim_.execute(stream, exec_args_);
  for (Arg& a : args_) {
    if (a.output && a.reorder) a.reorder.execute(stream, {{DNNL_ARG_FROM, a.inner}, {DNNL_ARG_TO, a.user}});
  }
  stream.wait();
}

double DnnlPlan::Time(const std::vector<void*>& data, int reps) {
  double best = 1e30;
  for (int i = 0; i < reps; ++i) {
    const auto start = std::chrono::steady_clock::now();
    Run(data);
    best = std::min(best, std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
  }
  return best;
}

}  // namespace caffe2
