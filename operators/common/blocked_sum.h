// BlockedSum: a vectorised sum over a long array that stays accurate. Eigen reduces each block of
// 4096 elements in the element type (SIMD); the block results accumulate in double, so the error
// does not grow with the array length the way one long float sum's does.
#pragma once

#include <Eigen/Core>
#include <algorithm>
#include <cstdint>

namespace caffe2 {

// reduce(block) maps an Eigen array map of one block to its (partial) sum.
template <class T, class Reduce>
double BlockedSum(const T* x, int64_t n, Reduce reduce) {
  using Array = Eigen::Array<T, Eigen::Dynamic, 1>;
  constexpr int64_t kBlock = 4096;
  double total = 0;
  for (int64_t start = 0; start < n; start += kBlock) {
    const int64_t len = std::min(kBlock, n - start);
    total += static_cast<double>(reduce(Eigen::Map<const Array>(x + start, len)));
  }
  return total;
}

}  // namespace caffe2
