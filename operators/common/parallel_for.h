// A minimal parallel-for for CPU kernels: splits [0, n) into contiguous chunks and runs them in
// parallel, the first chunk on the calling thread. Two implementations, chosen by CMake:
// parallel_for_openmp.cc runs the chunks on the OpenMP thread pool (the pool oneDNN uses, so oneDNN
// primitives and our kernels never compete for the cores); parallel_for_threads.cc, built without
// OpenMP, on short-lived threads (a thread start costs tens of microseconds). Kernels size the
// split with KernelWorkers so that small ops stay on one thread.
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <functional>
#include <thread>

namespace caffe2 {

// Hardware threads available to one kernel (at least 1), capped by OMP_NUM_THREADS when it is set
// (so that several processes sharing a machine, e.g. shards of one run, can split the cores).
inline int MaxKernelThreads() {
  static const int n = [] {
    int hw = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
    if (const char* env = std::getenv("OMP_NUM_THREADS")) {
      const int cap = std::atoi(env);
      if (cap > 0) hw = std::min(hw, cap);
    }
    return hw;
  }();
  return n;
}

// How many workers to use for `items` independent items costing `flops` in total: one per
// `min_flops_per_worker` of work, at most one per item and per hardware thread.
inline int KernelWorkers(int64_t items, double flops, double min_flops_per_worker = 2e6) {
  const double by_work = std::max(1.0, flops / min_flops_per_worker);
  const int64_t w = std::min<int64_t>(
      {items, static_cast<int64_t>(MaxKernelThreads()), static_cast<int64_t>(by_work)});
  return static_cast<int>(std::max<int64_t>(1, w));
}

// Workers for `items` units over `elements` elements of simple per-element work (normalisation,
// softmax, LRN): one per 64K elements.
inline int ElementWorkers(int64_t items, int64_t elements) {
  return KernelWorkers(items, static_cast<double>(elements), 65536.0);
}

// While it lives, OpenMP parallel regions that libraries start on this thread (oneDNN's primitives
// and GEMM) use MaxKernelThreads() threads, like ParallelFor, whatever omp_set_num_threads said
// before (importing PyTorch sets 1); the previous setting comes back after. A no-op without OpenMP.
class KernelThreadsScope {
 public:
  KernelThreadsScope();
  ~KernelThreadsScope();
  KernelThreadsScope(const KernelThreadsScope&) = delete;
  KernelThreadsScope& operator=(const KernelThreadsScope&) = delete;

 private:
  int previous_ = 0;
};

namespace detail {
// Runs fn(n * w / workers, n * (w + 1) / workers, w) for w in [0, workers), 2 <= workers <= n.
void RunChunks(int64_t n, int workers, const std::function<void(int64_t, int64_t, int)>& fn);
}  // namespace detail

// Calls fn(begin, end, worker) for `workers` contiguous chunks of [0, n) (fewer when n is smaller).
// Waits for all chunks; the first exception thrown by a chunk is rethrown.
inline void ParallelFor(int64_t n, int workers,
                        const std::function<void(int64_t begin, int64_t end, int worker)>& fn) {
  if (n <= 0) return;
  workers = static_cast<int>(std::max<int64_t>(1, std::min<int64_t>(workers, n)));
  if (workers == 1) {
    fn(0, n, 0);
    return;
  }
  detail::RunChunks(n, workers, fn);
}

}  // namespace caffe2
