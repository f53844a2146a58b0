// ParallelFor for the CPU kernels of operators/nn: splits [0, n) into contiguous chunks run on up to
// hardware_concurrency threads (the caller's thread runs the first chunk) when the total work is large
// enough to pay for starting threads; otherwise runs fn(0, 0, n) inline.
#pragma once

#include <algorithm>
#include <cstdint>
#include <exception>
#include <thread>
#include <vector>

namespace caffe2 {

// Elements of work below which a kernel stays on one thread.
constexpr int64_t kNNMinParallelWork = 1 << 16;

// Number of chunks ParallelFor will use for n units and `work` elements.
inline int ParallelChunks(int64_t n, int64_t work) {
  const int64_t hw = std::max(1u, std::thread::hardware_concurrency());
  const int64_t by_work = work / kNNMinParallelWork;
  return static_cast<int>(std::max<int64_t>(1, std::min({hw, by_work, n, int64_t{8}})));
}

// fn(chunk, begin, end) for each chunk of [0, n); chunk indexes are 0..ParallelChunks(n, work)-1.
template <class Fn>
void ParallelFor(int64_t n, int64_t work, Fn&& fn) {
  const int chunks = ParallelChunks(n, work);
  if (chunks == 1) {
    fn(0, int64_t{0}, n);
    return;
  }
  std::vector<std::thread> threads;
  std::vector<std::exception_ptr> errors(chunks);
  auto bounds = [&](int k) { return n * k / chunks; };
  for (int k = 1; k < chunks; ++k) {
    threads.emplace_back([&, k] {
      try {
        fn(k, bounds(k), bounds(k + 1));
      } catch (...) {
        errors[k] = std::current_exception();
      }
    });
  }
  try {
    fn(0, int64_t{0}, bounds(1));
  } catch (...) {
    errors[0] = std::current_exception();
  }
  for (auto& t : threads) t.join();
  for (auto& e : errors) {
    if (e) std::rethrow_exception(e);
  }
}

}  // namespace caffe2
