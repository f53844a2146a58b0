// Gather: [DATA, INDICES (int32/int64)] -> [OUTPUT], OUTPUT = DATA[INDICES] along the first dim,
// shaped INDICES.dims + DATA.dims[1:] (spec ops §1.3). Any element type of DATA.
// Out-of-range indices: the CPU kernel raises. The CUDA kernel raises too when INDICES lives on
// the host (it checks them there before copying them to the GPU); INDICES on the GPU are not
// checked (that would wait for the GPU on every run) and an out-of-range index gives a row of
// zero bytes.
// Gradient: sparse by default, DATA's gradient is the slice (INDICES, dOUTPUT) with no op emitted;
// with dense_gradient=1 it is SparseToDense [INDICES, dOUTPUT, DATA] -> [dDATA].
#pragma once

#include <vector>

#include "operators/tensor/tensor_util.h"

namespace caffe2 {

// OUTPUT's dims; an error for a 0-d DATA.
inline std::vector<int64_t> GatherDims(const Tensor& data, const Tensor& indices) {
  C2_ENFORCE(data.ndim() >= 1, "DATA must have at least one dimension, got a 0-d tensor");
  std::vector<int64_t> dims = indices.dims();
  dims.insert(dims.end(), data.dims().begin() + 1, data.dims().end());
  return dims;
}

// The error for index idx at position i out of range for DATA.
inline void CheckGatherIndex(int64_t idx, size_t i, const Tensor& data) {
  C2_ENFORCE(idx >= 0 && idx < data.dim(0), "index ", idx, " at position ", i,
             " out of range for DATA ", Tensor::DimsString(data.dims()));
}

}  // namespace caffe2
