// Input checks of the segment reductions and their gradients (contract in lengths_reducer_op.cc),
// shared by the CPU kernels and the CUDA kernels (lengths_reducer_op.cu) so both refuse the same
// inputs with the same messages. Only LengthsValues reads data (LENGTHS on the host); the rest read
// dims and types, so they apply to tensors on any device.
#pragma once

#include <vector>

#include "core/enforce.h"
#include "core/tensor.h"

namespace caffe2 {

enum class LengthsReduce { kSum, kMean, kWeightedSum };

// LENGTHS is a 1-D int32 tensor.
inline void CheckLengthsType(const Tensor& t) {
  C2_ENFORCE(t.ndim() == 1 && t.IsType<int32_t>(), "LENGTHS must be a 1-D int32 tensor, got ",
             t.DebugString());
}

// The lengths (LENGTHS on the host), each checked to be >= 0.
inline std::vector<int64_t> LengthsValues(const Tensor& t) {
  CheckLengthsType(t);
  std::vector<int64_t> out(t.numel());
  for (int64_t i = 0; i < t.numel(); ++i) {
    out[i] = t.data<int32_t>()[i];
    C2_ENFORCE(out[i] >= 0, "length ", i, " is negative: ", out[i]);
  }
  return out;
}

inline int64_t LengthsTotal(const std::vector<int64_t>& lengths) {
  int64_t n = 0;
  for (int64_t l : lengths) n += l;
  return n;
}

// DATA of a forward reduction: float, at least 1-D.
inline void CheckLengthsData(const Tensor& data) {
  C2_ENFORCE(data.IsType<float>() && data.ndim() >= 1,
             "DATA must be a float tensor with at least one dim, got ", data.DebugString());
}

// The lengths add up to the number of INDICES (sparse) ...
inline void CheckLengthsIndexCount(int64_t n, int64_t num_indices) {
  C2_ENFORCE(num_indices == n, "LENGTHS add up to ", n, " but there are ", num_indices, " INDICES");
}

// ... or to the number of DATA rows (dense).
inline void CheckLengthsDataRows(int64_t n, const Tensor& data) {
  C2_ENFORCE(data.dim(0) == n, "LENGTHS add up to ", n, " but DATA ",
             Tensor::DimsString(data.dims()), " has ", data.dim(0), " rows");
}

// INDICES[i] = idx names a row of DATA.
inline void CheckLengthsIndex(int64_t idx, size_t i, const Tensor& data) {
  C2_ENFORCE(idx >= 0 && idx < data.dim(0), "index ", idx, " at position ", i,
             " out of range for DATA ", Tensor::DimsString(data.dims()));
}

// SCALARS / WEIGHTS: n floats, one per row.
inline void CheckLengthsWeights(const Tensor& w, int64_t n, const char* name) {
  C2_ENFORCE(w.IsType<float>() && w.numel() == n, name, " must hold ", n,
             " floats (one per row), got ", w.DebugString());
}

// dY of a gradient: float, at least 1-D ...
inline void CheckLengthsGradOutput(const Tensor& dY) {
  C2_ENFORCE(dY.IsType<float>() && dY.ndim() >= 1,
             "dY must be a float tensor with at least one dim");
}

// ... with one row per segment.
inline void CheckLengthsGradSegments(const Tensor& dY, int64_t segments) {
  C2_ENFORCE(dY.dim(0) == segments, "dY ", Tensor::DimsString(dY.dims()),
             " must have one row per segment (", segments, ")");
}

// The rows of the gradient's trailing DATA / INDICES input (1 for a 0-d tensor).
inline int64_t LengthsGradRows(const Tensor& last) { return last.ndim() >= 1 ? last.dim(0) : 1; }

// The trailing DATA / INDICES input of a gradient has n rows.
inline void CheckLengthsGradRows(const Tensor& last, int64_t n) {
  C2_ENFORCE(LengthsGradRows(last) == n, "LENGTHS add up to ", n, " but ",
             Tensor::DimsString(last.dims()), " has a different number of rows");
}

}  // namespace caffe2
