// Transpose: [X] -> [Y], Y.dims[i] = X.dims[axes[i]] (spec ops §1.3). `axes` (ints) is a
// permutation of 0..ndim-1, reversed dims by default. Any element type (on CUDA: any type a GPU
// tensor holds, moved as bytes; see operators/common/strided_copy.h).
// Gradient: Transpose(dY) with the inverse permutation.
#pragma once

#include <vector>

#include "core/tensor.h"
#include "core/types.h"

namespace caffe2 {

class CUDAContext;

// The permutation that `axes` (possibly empty: reversed dims; negative entries count from the end)
// names for a tensor of ndim dims; an error unless it is one.
std::vector<int> TransposePermutation(const std::vector<int>& axes, int ndim);

// Writes into y the elements of x (dims xdims, type meta) permuted so that y's dim i is x's dim
// perm[i]. Shared with the layout conversions (NHWC2NCHW, NCHW2NHWC).
void TransposeData(const TypeMeta& meta, const std::vector<int64_t>& xdims,
                   const std::vector<int>& perm, const void* x, void* y);

// The CUDA twin (transpose_op.cu): resizes Y (on the op's GPU) to X's dims permuted by perm and
// queues the transpose of X (on that GPU) on the context's stream.
void TransposeOnGpu(CUDAContext* context, const Tensor& X, const std::vector<int>& perm, Tensor* Y);

}  // namespace caffe2
