// oneDNN plumbing shared by the oneDNN-backed CPU kernels (compiled only when oneDNN is built in;
// the kernels that use it are the DNNL engines, registered only then).
//
// One CPU engine per process and one stream per thread. A DnnlPlan runs primitives with the
// reorders around them: the caller's tensors are plain (NCHW, OIHW, ...), the primitives may want
// other layouts (blocked formats picked through format_tag::any). Plans hold no data buffers
// (reorder targets live in a ScratchBuffer during Run), so they can be cached per shape and reused;
// they are not thread-safe (Run rebinds the data pointers), so caches are per thread.
#pragma once

#include <oneapi/dnnl/dnnl.hpp>

#include <unordered_map>
#include <vector>

namespace caffe2 {

dnnl::engine& DnnlEngine();
dnnl::stream& DnnlStream();  // this thread's stream

// A reference implementation ("ref:...") is far slower than our im2col path: kernels fall back
// then.
bool DnnlIsReference(const dnnl::primitive_desc_base& pd);

// A sequence of primitives over the caller's tensors (the data pointers given to Run, in a fixed
// order, each with its plain layout). Each primitive argument is bound to a tensor and the layout
// the primitive wants: an input in another layout is reordered into scratch memory before its first
// use (once per Run for one tensor and layout, so two primitives reading dY in one blocked layout
// share the reorder); an output is written to scratch and reordered into the tensor after the
// primitive.
class DnnlPlan {
 public:
  struct Binding {
    int arg;  // DNNL_ARG_*
    int tensor;
    dnnl::memory::desc want;
    bool output;
  };

  DnnlPlan() = default;  // invalid
  explicit DnnlPlan(const std::vector<dnnl::memory::desc>& tensors);

  void Add(const dnnl::primitive& prim, const std::vector<Binding>& bindings);

  // Runs with one data pointer per tensor (unused tensors may be null).
  void Run(const std::vector<void*>& data);
  // Runs once and returns the seconds it took.
  double Time(const std::vector<void*>& data);

  bool valid() const { return !steps_.empty(); }

 private:
  struct Reorder {
    dnnl::primitive prim;
    dnnl::memory from, to;
  };
  struct Step {
    dnnl::primitive prim;
    std::unordered_map<int, dnnl::memory> args;
    std::vector<Reorder> before, after;
  };
  struct Inner {
    int tensor;
    dnnl::memory mem;
    size_t offset;  // floats into the scratch block
  };

  std::vector<dnnl::memory> tensors_;
  std::vector<Inner> inner_;
  size_t scratch_floats_ = 0;
  std::vector<Step> steps_;
};

}  // namespace caffe2
