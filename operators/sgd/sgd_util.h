// Argument checks and update math shared by the optimizer update operators (their CPU and CUDA
// kernels).
#pragma once

#include <cmath>
#include <vector>

#include "core/operator.h"
#include "operators/common/host_device.h"
#include "operators/common/input_checks.h"

namespace caffe2 {

// One element of a momentum update (momentum_sgd_op.cc's contract), in float on every device:
// returns the step (param -= step; it is also the gradient output) and writes the new moment.
//   plain:    step = rate*g + momentum*m;  m' = step
//   nesterov: m' = momentum*m + rate*g;    step = (1+momentum)*m' - momentum*m
C2_HOST_DEVICE inline float MomentumUpdate(float g, float m, float rate, float momentum,
                                           bool nesterov, float* m_new) {
  if (nesterov) {
    const float mn = momentum * m + rate * g;
    *m_new = mn;
    return (1 + momentum) * mn - momentum * m;
  }
  const float step = rate * g + momentum * m;
  *m_new = step;
  return step;
}

// The value of `t`, the input called `name`: a one-element float tensor (on the host).
inline float ScalarFloat(const Tensor& t, const char* name) {
  C2_ENFORCE(t.numel() == 1 && t.IsType<float>(), name, " must be a one-element float tensor, got ",
             t.DebugString());
  return t.data<float>()[0];
}

// The learning rate: a one-element float tensor, used as given (its sign is the caller's choice).
inline float LearningRateValue(const Tensor& lr) { return ScalarFloat(lr, "lr"); }

inline void CheckSameShape(const Tensor& a, const char* a_name, const Tensor& b,
                           const char* b_name) {
  C2_ENFORCE(a.dims() == b.dims(), a_name, " ", Tensor::DimsString(a.dims()), " and ", b_name, " ",
             Tensor::DimsString(b.dims()), " must have the same shape");
}

// The indices of a sparse update are int32 or int64 (a check of the type only, for any device).
inline void CheckSparseIndexType(const Tensor& indices) {
  C2_ENFORCE(indices.IsType<int32_t>() || indices.IsType<int64_t>(),
             "indices must be int32 or int64, got ", indices.DebugString());
}

// Indices of a sparse update as int64, each checked against the number of rows.
inline std::vector<int64_t> SparseRows(const Tensor& indices, int64_t rows) {
  CheckSparseIndexType(indices);
  std::vector<int64_t> out(indices.numel());
  for (int64_t i = 0; i < indices.numel(); ++i) {
    out[i] = indices.IsType<int32_t>() ? indices.data<int32_t>()[i] : indices.data<int64_t>()[i];
    C2_ENFORCE(out[i] >= 0 && out[i] < rows, "index ", out[i], " at position ", i,
               " out of range for ", rows, " rows");
  }
  return out;
}

// A sparse update's param has rows (at least one dimension).
inline void CheckSparseParam(const Tensor& param) {
  C2_ENFORCE(param.ndim() >= 1, "param must have at least one dimension");
}

// The row-wise moment (named `name`) of a row-wise sparse update holds one value per param row.
inline void CheckRowWiseMoment(const Tensor& moment, const char* name, const Tensor& param) {
  C2_ENFORCE(moment.numel() == param.dim(0), name, " ", Tensor::DimsString(moment.dims()),
             " must hold one value per row of param ", Tensor::DimsString(param.dims()));
}

// The state of a sparse update: param at least 1-d; `moment` (named `name`) shaped like param, or
// with one value per param row for the row-wise variants.
inline void CheckSparseState(const Tensor& param, const Tensor& moment, const char* name,
                             bool row_wise) {
  CheckSparseParam(param);
  if (row_wise) {
    CheckRowWiseMoment(moment, name, param);
  } else {
    CheckSameShape(param, "param", moment, name);
  }
}

// SparseMomentumSGDUpdate's grad, moment and param: float; moment shaped like param, at least 1-d.
inline void CheckSparseMomentumInputs(const Tensor& grad, const Tensor& moment,
                                      const Tensor& param) {
  CheckFloat(grad, "grad");
  CheckFloat(moment, "moment");
  CheckFloat(param, "param");
  CheckSameShape(moment, "moment", param, "param");
  CheckSparseParam(param);
}

// grad of a sparse update holds one param row (`block` values) per index.
inline void CheckSparseGrad(const Tensor& grad, int64_t num_indices, int64_t block) {
  C2_ENFORCE(grad.numel() == num_indices * block, "grad ", Tensor::DimsString(grad.dims()),
             " must hold ", num_indices, " rows of ", block, " values (one per index)");
}

// Adam's bias correction sqrt(1 - beta2^t) / (1 - beta1^t), t = iter + 1, from the iteration
// counter `it` (a one-element int64 tensor on the host).
inline double AdamCorrection(float beta1, float beta2, const Tensor& it) {
  C2_ENFORCE(it.numel() == 1 && it.IsType<int64_t>(),
             "iter must be a one-element int64 tensor, got ", it.DebugString());
  const double t = static_cast<double>(it.data<int64_t>()[0] + 1);
  return std::sqrt(1.0 - std::pow(beta2, t)) / (1.0 - std::pow(beta1, t));
}

// ScatterWeightedSum: inputs [X0, w0, indices, slices1, w1, ...] (an odd number, at least 5) ...
inline void CheckScatterInputCount(int n) {
  C2_ENFORCE(n >= 5 && n % 2 == 1, "inputs are [X0, w0, indices, slices1, w1, ...], got ", n);
}

// ... X0, updated in place: float, at least 1-d (its rows are what indices name) ...
inline void CheckScatterTarget(const Tensor& X) {
  CheckFloat(X, "X0");
  C2_ENFORCE(X.ndim() >= 1, "X0 must have at least one dimension");
}

// ... each weight (input i) a one-element float tensor ...
inline void CheckScatterWeight(const Tensor& w, int i) {
  C2_ENFORCE(w.numel() == 1 && w.IsType<float>(), "weight ", i,
             " must be a one-element float tensor, got ", w.DebugString());
}

// ... and each slices input (input i) one X0 row (`block` floats) per index.
inline void CheckScatterSlices(const Tensor& s, int i, int64_t num_indices, int64_t block) {
  CheckFloat(s, "slices");
  C2_ENFORCE(s.numel() == num_indices * block, "slices input ", i, " ",
             Tensor::DimsString(s.dims()), " must hold ", num_indices, " rows of ", block,
             " values");
}

}  // namespace caffe2
