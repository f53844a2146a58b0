// The axes and output dims of ReduceSum / ReduceMean (contract in reduce_op.cc), shared by the
// CPU and CUDA kernels.
#pragma once

#include <algorithm>
#include <vector>

#include "core/enforce.h"
#include "core/tensor.h"

namespace caffe2 {

// The sorted, unique, non-negative reduced axes of an ndim-d input.
inline std::vector<int> ResolveAxes(const std::vector<int>& axes,
                                    const std::vector<int64_t>& dims) {
  const int nd = static_cast<int>(dims.size());
  std::vector<int> out;
  if (axes.empty()) {
    for (int i = 0; i < nd; ++i) out.push_back(i);
    return out;
  }
  for (int a : axes) {
    const int r = a < 0 ? a + nd : a;
    C2_ENFORCE(r >= 0 && r < nd, "axis ", a, " out of range for X ", Tensor::DimsString(dims));
    out.push_back(r);
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

inline std::vector<int64_t> ReducedDims(const std::vector<int64_t>& dims,
                                        const std::vector<int>& axes, bool keepdims) {
  std::vector<int64_t> out;
  for (size_t i = 0; i < dims.size(); ++i) {
    const bool reduced = std::binary_search(axes.begin(), axes.end(), static_cast<int>(i));
    if (!reduced)
      out.push_back(dims[i]);
    else if (keepdims)
      out.push_back(1);
  }
  return out;
}

// ReduceMean's empty-input rule (docs/empty_inputs.md): a mean over no elements is undefined, so
// reducing an empty extent into a non-empty output is an error (ReduceSum gives 0).
inline void CheckMeanExtent(const Tensor& X, const std::vector<int>& axes) {
  int64_t count = 1, outputs = 1;
  for (size_t i = 0; i < X.dims().size(); ++i) {
    const bool reduced = std::binary_search(axes.begin(), axes.end(), static_cast<int>(i));
    (reduced ? count : outputs) *= X.dims()[i];
  }
  C2_ENFORCE(count > 0 || outputs == 0, "X ", Tensor::DimsString(X.dims()), " reduced over axes ",
             Tensor::DimsString(std::vector<int64_t>(axes.begin(), axes.end())),
             " is an empty extent: the mean of 0 elements is undefined (ReduceSum gives 0)");
}

}  // namespace caffe2
