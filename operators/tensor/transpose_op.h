// Transpose: [X] -> [Y], Y.dims[i] = X.dims[axes[i]] (spec ops §1.3). `axes` (ints) is a
// permutation of 0..ndim-1, reversed dims by default. Any element type.
// Gradient: Transpose(dY) with the inverse permutation.
#pragma once

#include <vector>

#include "core/types.h"

namespace caffe2 {

// Writes into y the elements of x (dims xdims, type meta) permuted so that y's dim i is x's dim
// perm[i]. Shared with the layout conversions (NHWC2NCHW, NCHW2NHWC).
void TransposeData(const TypeMeta& meta, const std::vector<int64_t>& xdims,
                   const std::vector<int>& perm, const void* x, void* y);

}  // namespace caffe2
