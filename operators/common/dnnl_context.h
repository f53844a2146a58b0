// oneDNN plumbing shared by the oneDNN-backed CPU kernels (compiled only when oneDNN is built in).
//
// One CPU engine per process and one stream per thread. A DnnlPlan is one primitive with the reorders
// around it: the caller's tensors are plain (NCHW, OIHW, ...), the primitive may want other layouts
// (blocked formats picked through format_tag::any); inputs are reordered into scratch memory before
// the primitive and outputs out of it after. Plans hold no data buffers, so they can be cached per
// shape and reused; they are not thread-safe (Run rebinds the data pointers), so caches are per thread.
#pragma once

#include <oneapi/dnnl/dnnl.hpp>

#include <unordered_map>
#include <vector>

#include "operators/common/dnnl.h"

namespace caffe2 {

dnnl::engine& DnnlEngine();
dnnl::stream& DnnlStream();  // this thread's stream

// A reference implementation ("ref:...") is far slower than our im2col path: kernels fall back then.
bool DnnlIsReference(const dnnl::primitive_desc_base& pd);

class DnnlPlan {
 public:
  DnnlPlan() = default;
  explicit DnnlPlan(dnnl::primitive prim) : prim_(std::move(prim)) {}

  // Declares argument `arg` (DNNL_ARG_*) with the caller's layout `user` and the primitive's `inner`.
  void AddInput(int arg, const dnnl::memory::desc& user, const dnnl::memory::desc& inner);
  void AddOutput(int arg, const dnnl::memory::desc& user, const dnnl::memory::desc& inner);

  // Runs with the data pointers of the arguments in the order they were added.
  void Run(const std::vector<void*>& data);
  // Runs `reps` times and returns the seconds of the fastest run (used to pick between plans).
  double Time(const std::vector<void*>& data, int reps);

  bool valid() const { return static_cast<bool>(prim_); }
  // Floats of scratch memory a run needs for the reordered arguments.
  size_t scratch_floats() const;

 private:
  struct Arg {
    int arg;
    bool output;
    dnnl::memory user, inner;  // inner == user when no reorder is needed
    dnnl::primitive reorder;   // empty when no reorder is needed
  };
  void Add(int arg, bool output, const dnnl::memory::desc& user, const dnnl::memory::desc& inner);

  dnnl::primitive prim_;
  std::vector<Arg> args_;
  std::unordered_map<int, dnnl::memory> exec_args_;
};

}  // namespace caffe2
