// Argument checks shared by the optimizer update operators.
#pragma once

#include "core/operator.h"

namespace caffe2 {

// The learning rate: a one-element float tensor, used as given (its sign is the caller's choice).
inline float LearningRateValue(const Tensor& lr) {
  C2_ENFORCE(lr.numel() == 1 && lr.IsType<float>(), "lr must be a one-element float tensor, got ",
             lr.DebugString());
  return lr.data<float>()[0];
}

inline void CheckSameShape(const Tensor& a, const char* a_name, const Tensor& b,
                           const char* b_name) {
  C2_ENFORCE(a.dims() == b.dims(), a_name, " ", Tensor::DimsString(a.dims()), " and ", b_name, " ",
             Tensor::DimsString(b.dims()), " must have the same shape");
}

inline void CheckFloat(const Tensor& t, const char* name) {
  C2_ENFORCE(t.IsType<float>(), name, " must be a float tensor, got ", t.DebugString());
}

// Indices of a sparse update as int64, each checked against the number of rows.
inline std::vector<int64_t> SparseRows(const Tensor& indices, int64_t rows) {
  C2_ENFORCE(indices.IsType<int32_t>() || indices.IsType<int64_t>(),
             "indices must be int32 or int64, got ", indices.DebugString());
  std::vector<int64_t> out(indices.numel());
  for (int64_t i = 0; i < indices.numel(); ++i) {
    out[i] = indices.IsType<int32_t>() ? indices.data<int32_t>()[i] : indices.data<int64_t>()[i];
    C2_ENFORCE(out[i] >= 0 && out[i] < rows, "index ", out[i], " at position ", i,
               " out of range for ", rows, " rows");
  }
  return out;
}

}  // namespace caffe2
