// Softmax: [X] -> [Y]. X is viewed as (N, D) with N = prod(X.dims[:axis]); each row becomes
// exp(x - max) / sum(exp(x - max)) (spec ops §1.2.6). Y has X's shape. Arg `axis` (default 1,
// negative counts from the end).
// SoftmaxGradient: [Y, dY] -> [dX], dX = Y * (dY - sum_row(dY * Y)).
//
// SoftmaxRows is shared with the softmax losses.
#pragma once

#include <cstdint>

namespace caffe2 {

// Row-wise numerically stable softmax of the row-major (N, D) matrix x into y (may alias x).
void SoftmaxRows(const float* x, int64_t N, int64_t D, float* y);

}  // namespace caffe2
