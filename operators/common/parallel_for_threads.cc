// ParallelFor on short-lived threads (built when OpenMP is not found).
#include <exception>
#include <thread>
#include <vector>

#include "operators/common/parallel_for.h"

namespace caffe2 {

KernelThreadsScope::KernelThreadsScope() = default;
KernelThreadsScope::~KernelThreadsScope() = default;

namespace detail {

void RunChunks(int64_t n, int workers, const std::function<void(int64_t, int64_t, int)>& fn) {
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

}  // namespace detail
}  // namespace caffe2
