// The (rows, cols) view of ReduceFront*/ReduceBack* (contract in reduce_front_back_op.cc), shared
// by the CPU and CUDA kernels: the reduced dims are the rows (Front) or the cols (Back).
#pragma once

#include <vector>

#include "core/tensor.h"

namespace caffe2 {

struct ReduceView {
  int64_t rows, cols;
  std::vector<int64_t> out_dims;
};

// The float X of the front/back reductions.
inline void CheckReduceFrontBackInput(const Tensor& X) {
  C2_ENFORCE(X.IsType<float>(), "unsupported type ", X.meta().name, " (supported: float)");
}

// A reduction gradient's dY: float, with the reduced dims.
inline void CheckReduceFrontBackGradient(const Tensor& dY, const ReduceView& v) {
  C2_ENFORCE(dY.IsType<float>() && dY.dims() == v.out_dims, "dY ", dY.DebugString(),
             " must be float with dims ", Tensor::DimsString(v.out_dims));
}

inline ReduceView MakeReduceView(const Tensor& X, int num_reduce_dim, bool front) {
  C2_ENFORCE(num_reduce_dim >= 0 && num_reduce_dim <= X.ndim(), "num_reduce_dim ", num_reduce_dim,
             " out of range for X ", Tensor::DimsString(X.dims()));
  const int split = front ? num_reduce_dim : X.ndim() - num_reduce_dim;
  ReduceView v{X.size_to_dim(split), X.size_from_dim(split), {}};
  if (front)
    v.out_dims.assign(X.dims().begin() + split, X.dims().end());
  else
    v.out_dims.assign(X.dims().begin(), X.dims().begin() + split);
  return v;
}

}  // namespace caffe2
