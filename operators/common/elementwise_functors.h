// Elementwise math as small functor structs, written once for every device: the CPU loops in
// operators/common/elementwise_cpu.h apply them, and a CUDA kernel can apply the same structs.
// Unary functors map x -> y; binary functors map (a, b) -> c; gradient functors map
// (saved, dy) -> dx where `saved` is the forward input X or output Y, as the op's contract says.
// A functor whose scalar form does not vectorise well may add `Array(x)`, the same math on a whole
// Eigen array expression; CPU ops opt into it with EigenUnaryLoop (elementwise_eigen.h). Nothing
// here includes Eigen: the member is only instantiated by code that does.
#pragma once

#include <cmath>

#include "operators/common/host_device.h"

namespace caffe2 {
// clang-format off: one line per functor keeps the table readable.
namespace functors {

// ---- binary arithmetic, comparison and logic ----
struct Add {
  template <class T>
  C2_HOST_DEVICE T operator()(T a, T b) const {
    return a + b;
  }
};
struct Sub {
  template <class T>
  C2_HOST_DEVICE T operator()(T a, T b) const {
    return a - b;
  }
};
struct Mul {
  template <class T>
  C2_HOST_DEVICE T operator()(T a, T b) const {
    return a * b;
  }
};
struct Div {
  template <class T>
  C2_HOST_DEVICE T operator()(T a, T b) const {
    return a / b;
  }
};
struct Pow {
  template <class T>
  C2_HOST_DEVICE T operator()(T a, T b) const {
    return std::pow(a, b);
  }
};
struct LT {
  template <class T>
  C2_HOST_DEVICE bool operator()(T a, T b) const {
    return a < b;
  }
};
struct LE {
  template <class T>
  C2_HOST_DEVICE bool operator()(T a, T b) const {
    return a <= b;
  }
};
struct GT {
  template <class T>
  C2_HOST_DEVICE bool operator()(T a, T b) const {
    return a > b;
  }
};
struct GE {
  template <class T>
  C2_HOST_DEVICE bool operator()(T a, T b) const {
    return a >= b;
  }
};
struct EQ {
  template <class T>
  C2_HOST_DEVICE bool operator()(T a, T b) const {
    return a == b;
  }
};
struct And {
  C2_HOST_DEVICE bool operator()(bool a, bool b) const { return a && b; }
};
struct Or {
  C2_HOST_DEVICE bool operator()(bool a, bool b) const { return a || b; }
};
struct Xor {
  C2_HOST_DEVICE bool operator()(bool a, bool b) const { return a != b; }
};

// ---- unary ----
struct Not {
  C2_HOST_DEVICE bool operator()(bool x) const { return !x; }
};
struct Exp {
  template <class T>
  C2_HOST_DEVICE T operator()(T x) const {
    return std::exp(x);
  }
  template <class A>
  auto Array(const A& x) const {
    return x.exp();
  }
};
struct Log {
  template <class T>
  C2_HOST_DEVICE T operator()(T x) const {
    return std::log(x);
  }
  template <class A>
  auto Array(const A& x) const {
    return x.log();
  }
};
struct Sqrt {
  template <class T>
  C2_HOST_DEVICE T operator()(T x) const {
    return std::sqrt(x);
  }
  template <class A>
  auto Array(const A& x) const {
    return x.sqrt();
  }
};
struct Sqr {
  template <class T>
  C2_HOST_DEVICE T operator()(T x) const {
    return x * x;
  }
};
struct Negative {
  template <class T>
  C2_HOST_DEVICE T operator()(T x) const {
    return -x;
  }
};
struct Abs {
  template <class T>
  C2_HOST_DEVICE T operator()(T x) const {
    return x < T(0) ? -x : x;
  }
};
struct Sigmoid {
  template <class T>
  C2_HOST_DEVICE T operator()(T x) const {
    return T(1) / (T(1) + std::exp(-x));
  }
  template <class A>
  auto Array(const A& x) const {
    return x.logistic();
  }
};
struct Tanh {
  template <class T>
  C2_HOST_DEVICE T operator()(T x) const {
    return std::tanh(x);
  }
  template <class A>
  auto Array(const A& x) const {
    return x.tanh();
  }
};
struct Relu {
  template <class T>
  C2_HOST_DEVICE T operator()(T x) const {
    return x > T(0) ? x : T(0);
  }
};
struct LeakyRelu {
  float alpha = 0.01f;
  template <class T>
  C2_HOST_DEVICE T operator()(T x) const {
    return x >= T(0) ? x : T(alpha) * x;
  }
};
struct Elu {
  float alpha = 1.0f;
  template <class T>
  C2_HOST_DEVICE T operator()(T x) const {
    return x > T(0) ? x : T(alpha) * (std::exp(x) - T(1));
  }
};
struct Softplus {
  // log(1 + exp(x)) without overflow for large x.
  template <class T>
  C2_HOST_DEVICE T operator()(T x) const {
    return x > T(0) ? x + std::log1p(std::exp(-x)) : std::log1p(std::exp(x));
  }
  template <class A>
  auto Array(const A& x) const {
    return x.max(typename A::Scalar(0)) + (-x.abs()).exp().log1p();
  }
};
struct Softsign {
  template <class T>
  C2_HOST_DEVICE T operator()(T x) const {
    return x / (T(1) + (x < T(0) ? -x : x));
  }
};
struct Cos {
  template <class T>
  C2_HOST_DEVICE T operator()(T x) const {
    return std::cos(x);
  }
};
struct Sin {
  template <class T>
  C2_HOST_DEVICE T operator()(T x) const {
    return std::sin(x);
  }
};
struct Cube {
  template <class T>
  C2_HOST_DEVICE T operator()(T x) const {
    return x * x * x;
  }
};
struct Reciprocal {
  template <class T>
  C2_HOST_DEVICE T operator()(T x) const {
    return T(1) / x;
  }
};
struct Log1p {
  template <class T>
  C2_HOST_DEVICE T operator()(T x) const {
    return std::log1p(x);
  }
};
struct Ceil {
  template <class T>
  C2_HOST_DEVICE T operator()(T x) const {
    return std::ceil(x);
  }
};
struct Floor {
  template <class T>
  C2_HOST_DEVICE T operator()(T x) const {
    return std::floor(x);
  }
};
struct Swish {  // x sigmoid(x)
  template <class T>
  C2_HOST_DEVICE T operator()(T x) const {
    return x / (T(1) + std::exp(-x));
  }
};
struct Sign {  // -1, 0 or 1; 0 for NaN
  template <class T>
  C2_HOST_DEVICE T operator()(T x) const {
    return x > T(0) ? T(1) : (x < T(0) ? T(-1) : T(0));
  }
};
struct Clip {
  float lo, hi;
  template <class T>
  C2_HOST_DEVICE T operator()(T x) const {
    return x < T(lo) ? T(lo) : (x > T(hi) ? T(hi) : x);
  }
};
struct Scale {
  float scale = 1.0f;
  template <class T>
  C2_HOST_DEVICE T operator()(T x) const {
    return static_cast<T>(x * scale);
  }
};

// ---- gradients: (saved, dy) -> dx ----
struct AbsGradient {  // saved = X
  template <class T>
  C2_HOST_DEVICE T operator()(T x, T dy) const {
    return x > T(0) ? dy : (x < T(0) ? -dy : T(0));
  }
};
struct SigmoidGradient {  // saved = Y
  template <class T>
  C2_HOST_DEVICE T operator()(T y, T dy) const {
    return dy * y * (T(1) - y);
  }
};
struct TanhGradient {  // saved = Y
  template <class T>
  C2_HOST_DEVICE T operator()(T y, T dy) const {
    return dy * (T(1) - y * y);
  }
};
struct ReluGradient {  // saved = Y
  template <class T>
  C2_HOST_DEVICE T operator()(T y, T dy) const {
    return y > T(0) ? dy : T(0);
  }
};
struct LeakyReluGradient {  // saved = Y
  float alpha = 0.01f;
  template <class T>
  C2_HOST_DEVICE T operator()(T y, T dy) const {
    return y >= T(0) ? dy : T(alpha) * dy;
  }
};
struct EluGradient {  // saved = Y; for x <= 0, dy/dx = alpha * exp(x) = y + alpha
  float alpha = 1.0f;
  template <class T>
  C2_HOST_DEVICE T operator()(T y, T dy) const {
    return y > T(0) ? dy : dy * (y + T(alpha));
  }
};
struct SoftplusGradient {  // saved = Y; sigmoid(x) = 1 - exp(-y)
  template <class T>
  C2_HOST_DEVICE T operator()(T y, T dy) const {
    return dy * (T(1) - std::exp(-y));
  }
};
struct CosGradient {  // saved = X
  template <class T>
  C2_HOST_DEVICE T operator()(T x, T dy) const {
    return -std::sin(x) * dy;
  }
};
struct SinGradient {  // saved = X
  template <class T>
  C2_HOST_DEVICE T operator()(T x, T dy) const {
    return std::cos(x) * dy;
  }
};
struct CubeGradient {  // saved = X
  template <class T>
  C2_HOST_DEVICE T operator()(T x, T dy) const {
    return T(3) * x * x * dy;
  }
};
struct ReciprocalGradient {  // saved = Y; d(1/x)/dx = -1/x^2 = -y^2
  template <class T>
  C2_HOST_DEVICE T operator()(T y, T dy) const {
    return -y * y * dy;
  }
};
struct Log1pGradient {  // saved = X
  template <class T>
  C2_HOST_DEVICE T operator()(T x, T dy) const {
    return dy / (T(1) + x);
  }
};
struct SwishGradient {  // saved = X; d(x s)/dx = s + x s (1 - s), s = sigmoid(x)
  template <class T>
  C2_HOST_DEVICE T operator()(T x, T dy) const {
    const T s = T(1) / (T(1) + std::exp(-x));
    return dy * (s + x * s * (T(1) - s));
  }
};
struct SoftsignGradient {  // saved = X
  template <class T>
  C2_HOST_DEVICE T operator()(T x, T dy) const {
    const T d = T(1) + (x < T(0) ? -x : x);
    return dy / (d * d);
  }
};
struct ClipGradient {  // saved = Y; the gradient passes where Y is strictly inside (lo, hi)
  float lo, hi;
  template <class T>
  C2_HOST_DEVICE T operator()(T y, T dy) const {
    return (y > T(lo) && y < T(hi)) ? dy : T(0);
  }
};

}  // namespace functors
// clang-format on
}  // namespace caffe2
