// The view of ArgMax / ArgMin (contract in arg_max_op.cc), shared by the CPU and CUDA kernels: X as
// (outer, n, inner) around the reduced axis, and Y's dims.
#pragma once

#include <vector>

#include "core/tensor.h"
#include "operators/tensor/tensor_util.h"

namespace caffe2 {

struct ArgView {
  int64_t outer, n, inner;
  std::vector<int64_t> out_dims;
};

inline ArgView MakeArgView(const Tensor& X, int axis_arg, bool keepdims) {
  const int axis = CanonicalAxis(axis_arg, X.ndim());
  const int64_t n = X.dim(axis);
  C2_ENFORCE(n > 0, "cannot reduce the empty axis ", axis, " of X ", Tensor::DimsString(X.dims()));
  std::vector<int64_t> dims = X.dims();
  if (keepdims) {
    dims[axis] = 1;
  } else {
    dims.erase(dims.begin() + axis);
  }
  return ArgView{X.size_to_dim(axis), n, X.size_from_dim(axis + 1), dims};
}

}  // namespace caffe2
