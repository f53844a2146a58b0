#include "operators/common/dnnl_context.h"

#include <chrono>
#include <cstdint>
#include <cstring>

#include "operators/common/parallel_for.h"
#include "operators/common/scratch_buffer.h"

namespace caffe2 {

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

DnnlPlan::DnnlPlan(const std::vector<dnnl::memory::desc>& tensors) {
  for (const auto& d : tensors) tensors_.push_back(dnnl::memory(d, DnnlEngine(), DNNL_MEMORY_NONE));
}

void DnnlPlan::Add(const dnnl::primitive& prim, const std::vector<Binding>& bindings) {
  Step step{prim, {}, {}, {}};
  for (const Binding& b : bindings) {
    const dnnl::memory& user = tensors_.at(b.tensor);
    if (b.want == user.get_desc()) {
      step.args[b.arg] = user;
      continue;
    }
    // An input already reordered into this layout by an earlier step is reused.
    const Inner* found = nullptr;
    if (!b.output) {
      for (const Inner& in : inner_) {
        if (in.tensor == b.tensor && in.mem.get_desc() == b.want) found = &in;
      }
    }
    if (!found) {
      inner_.push_back({b.output ? -1 : b.tensor,
                        dnnl::memory(b.want, DnnlEngine(), DNNL_MEMORY_NONE), scratch_floats_});
      // Whole 64-byte lines per piece, so that every piece stays aligned.
      scratch_floats_ += (b.want.get_size() / sizeof(float) + 15) / 16 * 16;
      found = &inner_.back();
      if (b.output) {
        step.after.push_back({dnnl::reorder(found->mem, user), found->mem, user});
      } else {
        step.before.push_back({dnnl::reorder(user, found->mem), user, found->mem});
      }
    }
    step.args[b.arg] = found->mem;
  }
  steps_.push_back(std::move(step));
}

void DnnlPlan::Run(const std::vector<void*>& data) {
  // 16 extra floats to align the block to 64 bytes.
  ScratchBuffer scratch(scratch_floats_ ? scratch_floats_ + 16 : 0);
  if (scratch_floats_) {
    const uintptr_t p = reinterpret_cast<uintptr_t>(scratch.data());
    float* base = reinterpret_cast<float*>((p + 63) / 64 * 64);
    for (Inner& in : inner_) in.mem.set_data_handle(base + in.offset);
  }
  for (size_t i = 0; i < tensors_.size(); ++i) {
    if (data.at(i)) tensors_[i].set_data_handle(data[i]);
  }
  KernelThreadsScope threads;
  dnnl::stream& stream = DnnlStream();
  for (Step& step : steps_) {
    for (Reorder& r : step.before)
      r.prim.execute(stream, {{DNNL_ARG_FROM, r.from}, {DNNL_ARG_TO, r.to}});
    step.prim.execute(stream, step.args);
    for (Reorder& r : step.after)
      r.prim.execute(stream, {{DNNL_ARG_FROM, r.from}, {DNNL_ARG_TO, r.to}});
  }
  stream.wait();
}

double DnnlPlan::Time(const std::vector<void*>& data) {
  const auto start = std::chrono::steady_clock::now();
  Run(data);
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

}  // namespace caffe2
