// EigenUnaryLoop: runs a functor's `Array(x)` form (operators/common/elementwise_functors.h) on the
// whole tensor as one Eigen array expression, which Eigen vectorises (exp, log, tanh, logistic have
// SIMD kernels there and not in libm). Included only by the ops that use it, to keep Eigen out of
// the other translation units.
#pragma once

#include <Eigen/Core>
#include <cstdint>

namespace caffe2 {

struct EigenUnaryLoop {
  template <class F, class T>
  static void Run(int64_t n, const T* x, T* y, F f) {
    using Array = Eigen::Array<T, Eigen::Dynamic, 1>;
    // Coefficient-wise, so y may alias x.
    Eigen::Map<Array>(y, n) = f.Array(Eigen::Map<const Array>(x, n));
  }
};

}  // namespace caffe2
