// A minimal parallel-for for CPU kernels: splits [0, n) into contiguous chunks and runs them on
// short-lived threads, the first chunk on the calling thread. Kernels size the split with
// KernelWorkers so that small ops stay on one thread (a thread start costs tens of microseconds).
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <exception>
#include <functional>
#include <thread>
#include <vector>

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
  const int64_t w = std::min<int64_t>({items, static_cast<int64_t>(MaxKernelThreads()),
                                       static_cast<int64_t>(by_work)});
  return static_cast<int>(std::max<int64_t>(1, w));
}

// Workers for `items` units over `elements` elements of simple per-element work (normalisation,
// softmax, LRN): one per 64K elements.
inline int ElementWorkers(int64_t items, int64_t elements) {
  return KernelWorkers(items, static_cast<double>(elements), 65536.0);
}

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
  std::vector<std::exception_ptr> errors(workers);
  auto run = [&](int w) {
    try {
      fn(n * w / workers, n * (w + 1) / workers, w);
    } catch (...) {
      errors[w] = std::current_exception();
    }
  };
  std::vector<std::thread> threads;
  threads.reserve(workers - 1);
  for (int w = 1; w < workers; ++w) threads.emplace_back(run, w);
  run(0);
  for (auto& t : threads) t.join();
  for (auto& e : errors) {
    if (e) std::rethrow_exception(e);
  }
}

}  // namespace caffe2
