// The two gradient products of Y = op(A) op(B) (op = optional transpose), shared by the
// MatMul and BatchMatMul gradient makers:
//   no transposes: dA = dY B^T      dB = A^T dY
//   trans_a:       dA = B dY^T      dB = A dY
//   trans_b:       dA = dY B        dB = dY^T A
//   both:          dA = B^T dY^T    dB = dY^T A^T
#pragma once

#include <array>

namespace caffe2 {

struct ProductGradientSpec {
  int x, y;              // operands: 0 = A, 1 = B, 2 = dY
  int trans_x, trans_y;  // the product's trans_a / trans_b
};

// [spec of dA, spec of dB].
inline std::array<ProductGradientSpec, 2> ProductGradientSpecs(bool trans_a, bool trans_b) {
  if (!trans_a && !trans_b) return {{{2, 1, 0, 1}, {0, 2, 1, 0}}};
  if (trans_a && !trans_b) return {{{1, 2, 0, 1}, {0, 2, 0, 0}}};
  if (!trans_a && trans_b) return {{{2, 1, 0, 0}, {2, 0, 1, 0}}};
  return {{{1, 2, 1, 1}, {2, 0, 1, 1}}};
}

}  // namespace caffe2
