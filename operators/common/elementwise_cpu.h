// CPU loops that apply the functors of operators/common/elementwise_functors.h, and a dispatch from
// a tensor's element type to a C++ type. Small on purpose: each op .cc instantiates what it uses.
// Big loops are split across threads with ParallelFor (ElementWorkers: one per 64K elements).
#pragma once

#include <string>
#include <type_traits>

#include "core/types.h"
#include "operators/common/broadcast.h"
#include "operators/common/parallel_for.h"

namespace caffe2 {

template <class... Ts>
struct TypeList {};
using FloatTypes = TypeList<float, double>;
using NumericTypes = TypeList<float, double, int32_t, int64_t>;
using NumericAndBoolTypes = TypeList<float, double, int32_t, int64_t, bool>;
using BoolTypes = TypeList<bool>;

// Calls f(TypeTag<T>{}) (core/types.h) for the T of `meta` among Ts; false when none matches.
template <class F, class... Ts>
bool DispatchType(const TypeMeta& meta, TypeList<Ts...>, F&& f) {
  bool done = false;
  ((!done && meta == TypeMeta::Make<Ts>() ? (f(TypeTag<Ts>{}), done = true) : false), ...);
  return done;
}

// "float, double, int32, int64"
template <class... Ts>
std::string TypeNames(TypeList<Ts...>) {
  std::string s;
  ((s += (s.empty() ? "" : ", ") + std::string(TypeMeta::Make<Ts>().name)), ...);
  return s;
}

template <class F, class TIn, class TOut>
void UnaryLoop(int64_t n, const TIn* x, TOut* y, F f) {
  ParallelFor(n, ElementWorkers(n, n), [&](int64_t b, int64_t e, int) {
    for (int64_t i = b; i < e; ++i) y[i] = f(x[i]);
  });
}

// The default CPU loop of UnaryOp: the scalar functor, element by element.
struct PlainUnaryLoop {
  template <class F, class TIn, class TOut>
  static void Run(int64_t n, const TIn* x, TOut* y, F f) {
    UnaryLoop(n, x, y, f);
  }
};

// c[p, j, q] = f(a[p, j, q], b[j]) over the (pre, n, post) view of A.
template <class F, class TIn, class TOut>
void BinaryLoop(const BroadcastSizes& s, const TIn* a, const TIn* b, TOut* c, F f) {
  const int64_t total = s.pre * s.n * s.post;
  if (s.pre == 1 && s.post == 1) {
    ParallelFor(s.n, ElementWorkers(s.n, s.n), [&](int64_t b0, int64_t e, int) {
      for (int64_t i = b0; i < e; ++i) c[i] = f(a[i], b[i]);
    });
  } else if (s.n == 1) {
    const TIn b0 = b[0];
    ParallelFor(total, ElementWorkers(total, total), [&](int64_t begin, int64_t end, int) {
      for (int64_t i = begin; i < end; ++i) c[i] = f(a[i], b0);
    });
  } else if (s.post == 1) {
    ParallelFor(s.pre, ElementWorkers(s.pre, total), [&](int64_t p0, int64_t p1, int) {
      for (int64_t p = p0; p < p1; ++p) {
        const TIn* ap = a + p * s.n;
        TOut* cp = c + p * s.n;
        for (int64_t j = 0; j < s.n; ++j) cp[j] = f(ap[j], b[j]);
      }
    });
  } else {
    ParallelFor(s.pre, ElementWorkers(s.pre, total), [&](int64_t p0, int64_t p1, int) {
      for (int64_t p = p0; p < p1; ++p) {
        for (int64_t j = 0; j < s.n; ++j) {
          const TIn bj = b[j];
          const int64_t off = (p * s.n + j) * s.post;
          for (int64_t q = 0; q < s.post; ++q) c[off + q] = f(a[off + q], bj);
        }
      }
    });
  }
}

// out[j] = sum over p, q of x[p, j, q]: what SumReduceLike (and so every broadcast gradient) does.
template <class T>
void SumReduceLoop(const BroadcastSizes& s, const T* x, T* out) {
  for (int64_t j = 0; j < s.n; ++j) out[j] = T(0);
  for (int64_t p = 0; p < s.pre; ++p) {
    for (int64_t j = 0; j < s.n; ++j) {
      const T* xj = x + (p * s.n + j) * s.post;
      T acc = T(0);
      for (int64_t q = 0; q < s.post; ++q) acc += xj[q];
      out[j] += acc;
    }
  }
}

}  // namespace caffe2
