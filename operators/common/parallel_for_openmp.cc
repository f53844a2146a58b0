// ParallelFor on the OpenMP thread pool. The threads persist between calls (no start cost) and are
// the ones oneDNN runs on. When the team is smaller than `workers` (a call from inside another
// parallel region gets one thread), each thread runs several chunks, so worker ids stay distinct.
#include <omp.h>

#include <exception>
#include <vector>

#include "operators/common/parallel_for.h"

namespace caffe2 {

KernelThreadsScope::KernelThreadsScope() : previous_(omp_get_max_threads()) {
  if (previous_ != MaxKernelThreads()) omp_set_num_threads(MaxKernelThreads());
}

KernelThreadsScope::~KernelThreadsScope() {
  if (previous_ != MaxKernelThreads()) omp_set_num_threads(previous_);
}

namespace detail {

void RunChunks(int64_t n, int workers, const std::function<void(int64_t, int64_t, int)>& fn) {
  std::vector<std::exception_ptr> errors(workers);
#pragma omp parallel num_threads(workers)
  {
    const int team = omp_get_num_threads();
    for (int w = omp_get_thread_num(); w < workers; w += team) {
      try {
        fn(n * w / workers, n * (w + 1) / workers, w);
      } catch (...) {
        errors[w] = std::current_exception();
      }
    }
  }
  for (auto& e : errors) {
    if (e) std::rethrow_exception(e);
  }
}

}  // namespace detail
}  // namespace caffe2
