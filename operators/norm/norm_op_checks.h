// Argument and input checks shared by the CPU kernels of the norm family (the contracts are in each
// op's .cc) and their CUDA and cuDNN kernels (<op>_op.cu, <op>_op_cudnn.cc), so every device
// refuses the same inputs with the same messages.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/operator.h"
#include "operators/norm/spatial_bn_op.h"

namespace caffe2 {

// A per-channel input (scale, bias, a statistic): C floats.
inline void CheckChannelVector(const Tensor& t, int64_t C, const char* name) {
  C2_ENFORCE(t.IsType<float>() && t.numel() == C, name, " ", Tensor::DimsString(t.dims()),
             " must hold ", C, " floats (one per channel)");
}

// SpatialBN's arguments: num_batches >= 1 (SpatialBN and its gradient) ...
inline void CheckSpatialBNNumBatches(int num_batches) {
  C2_ENFORCE(num_batches >= 1, "num_batches must be >= 1, got ", num_batches);
}

// ... and SpatialBN's own: epsilon > 0, momentum in [0, 1], the outputs of its mode, and the sums
// inputs that num_batches > 1 needs.
inline void CheckSpatialBNArgs(const OperatorBase& op, bool is_test, float epsilon, float momentum,
                               int num_batches) {
  C2_ENFORCE(epsilon > 0, "epsilon must be > 0, got ", epsilon);
  C2_ENFORCE(momentum >= 0 && momentum <= 1, "momentum must be in [0, 1], got ", momentum);
  CheckSpatialBNNumBatches(num_batches);
  if (is_test) {
    C2_ENFORCE(op.OutputSize() == 1, "test mode (is_test=1) produces exactly 1 output, got ",
               op.OutputSize());
  } else {
    C2_ENFORCE(op.OutputSize() == 5,
               "training (is_test=0) needs 5 outputs [Y, running_mean, running_var, saved_mean, "
               "saved_inv_std], got ",
               op.OutputSize());
    C2_ENFORCE(num_batches == 1 || op.InputSize() == 7, "num_batches ", num_batches,
               " needs the sums and sumsq inputs (7 inputs), got ", op.InputSize());
  }
}

// SpatialBN's per-channel inputs: scale and bias; mean and var in test mode; sums and sumsq in
// training with num_batches > 1.
inline void CheckSpatialBNInputs(const OperatorBase& op, int64_t C, bool is_test, int num_batches) {
  CheckChannelVector(op.Input(1), C, "scale");
  CheckChannelVector(op.Input(2), C, "bias");
  if (is_test) {
    CheckChannelVector(op.Input(3), C, "mean");
    CheckChannelVector(op.Input(4), C, "var");
  } else if (num_batches > 1) {
    CheckChannelVector(op.Input(5), C, "sums");
    CheckChannelVector(op.Input(6), C, "sumsq");
  }
}

// Batch statistics need at least one value per channel.
inline void CheckSpatialBNBatch(double count, const Tensor& X) {
  C2_ENFORCE(count > 0, "cannot compute batch statistics of an empty batch ",
             Tensor::DimsString(X.dims()));
}

// SpatialBNGradient's [X, scale, dY, mean or saved_mean, var or saved_inv_std, (dscale and dbias
// aggregated across devices)]: dY shaped like X, the rest C floats each.
inline void CheckSpatialBNGradientInputs(const OperatorBase& op, int64_t C, bool is_test) {
  const Tensor& X = op.Input(0);
  const Tensor& dY = op.Input(2);
  C2_ENFORCE(dY.dims() == X.dims(), "dY ", Tensor::DimsString(dY.dims()), " must be shaped like X ",
             Tensor::DimsString(X.dims()));
  CheckChannelVector(op.Input(1), C, "scale");
  CheckChannelVector(op.Input(3), C, is_test ? "mean" : "saved_mean");
  CheckChannelVector(op.Input(4), C, is_test ? "var" : "saved_inv_std");
  if (op.InputSize() == 7 && !is_test) {
    CheckChannelVector(op.Input(5), C, "dscale_aggregated");
    CheckChannelVector(op.Input(6), C, "dbias_aggregated");
  }
}

// ChannelBackpropStats' [X, saved_mean, saved_inv_std, dY]: dY float and shaped like X, the
// statistics C floats each. Returns X's channel layout.
inline ChannelLayout CheckChannelBackpropStatsInputs(const OperatorBase& op,
                                                     const std::string& order) {
  const Tensor& X = op.Input(0);
  const Tensor& dY = op.Input(3);
  const ChannelLayout l = GetChannelLayout(X, order);
  C2_ENFORCE(dY.dims() == X.dims() && dY.IsType<float>(), "dY ", Tensor::DimsString(dY.dims()),
             " must be float and shaped like X ", Tensor::DimsString(X.dims()));
  CheckChannelVector(op.Input(1), l.C, "saved_mean");
  CheckChannelVector(op.Input(2), l.C, "saved_inv_std");
  return l;
}

inline void CheckNormEpsilon(float epsilon) {
  C2_ENFORCE(epsilon >= 0, "epsilon must be >= 0, got ", epsilon);
}

// LayerNorm's X viewed as M rows of D values at `axis` (negative counts from the end).
struct LayerNormView {
  int64_t M = 0, D = 0;
  std::vector<int64_t> moments_dims;  // X.dims[:axis] + [1], the dims of mean and stdev
};

inline int LayerNormCanonicalAxis(int axis, const Tensor& X) {
  const int ax = axis < 0 ? axis + X.ndim() : axis;
  C2_ENFORCE(ax >= 0 && ax < X.ndim(), "axis ", axis, " out of range for X ",
             Tensor::DimsString(X.dims()));
  return ax;
}

inline LayerNormView LayerNormRows(int axis, const Tensor& X) {
  const int ax = LayerNormCanonicalAxis(axis, X);
  LayerNormView v;
  v.M = X.size_to_dim(ax);
  v.D = X.size_from_dim(ax);
  v.moments_dims.assign(X.dims().begin(), X.dims().begin() + ax);
  v.moments_dims.push_back(1);
  return v;
}

// LayerNorm's [X]: float, non-empty rows.
inline LayerNormView CheckLayerNormInput(int axis, const Tensor& X) {
  C2_ENFORCE(X.IsType<float>(), "float input expected, got ", X.meta().name);
  const LayerNormView v = LayerNormRows(axis, X);
  C2_ENFORCE(v.D > 0, "cannot normalize empty rows of X ", Tensor::DimsString(X.dims()));
  return v;
}

// LayerNormGradient's [dY, Y, mean, stdev, X].
inline LayerNormView CheckLayerNormGradientInputs(int axis, const Tensor& dY, const Tensor& mean,
                                                  const Tensor& stdev, const Tensor& X) {
  const LayerNormView v = LayerNormRows(axis, X);
  C2_ENFORCE(dY.dims() == X.dims(), "dY ", Tensor::DimsString(dY.dims()), " must be shaped like X ",
             Tensor::DimsString(X.dims()));
  C2_ENFORCE(mean.numel() == v.M && stdev.numel() == v.M, "mean ", Tensor::DimsString(mean.dims()),
             " and stdev ", Tensor::DimsString(stdev.dims()), " must hold one value per row (", v.M,
             ")");
  return v;
}

// InstanceNorm's and InstanceNormGradient's X (float, rank 3 to 5), scale and bias (C floats each).
inline ChannelLayout CheckInstanceNormInputs(const OperatorBase& op, const Tensor& X,
                                             const std::string& order) {
  const ChannelLayout l = GetChannelLayout(X, order);
  for (int i = 1; i <= 2; ++i) {
    C2_ENFORCE(op.Input(i).IsType<float>() && op.Input(i).numel() == l.C, i == 1 ? "scale" : "bias",
               " ", Tensor::DimsString(op.Input(i).dims()), " must hold ", l.C,
               " floats (one per channel)");
  }
  return l;
}

// InstanceNormGradient's [X, scale, bias, dY, (mean, inv_std)].
inline ChannelLayout CheckInstanceNormGradientInputs(const OperatorBase& op,
                                                     const std::string& order) {
  const Tensor& X = op.Input(0);
  const Tensor& dY = op.Input(3);
  const ChannelLayout l = CheckInstanceNormInputs(op, X, order);
  C2_ENFORCE(dY.dims() == X.dims(), "dY ", Tensor::DimsString(dY.dims()), " must be shaped like X ",
             Tensor::DimsString(X.dims()));
  if (op.InputSize() == 6) {
    for (int i = 4; i <= 5; ++i) {
      C2_ENFORCE(op.Input(i).IsType<float>() && op.Input(i).numel() == l.N * l.C,
                 i == 4 ? "mean" : "inv_std", " ", Tensor::DimsString(op.Input(i).dims()),
                 " must hold N x C = ", l.N * l.C, " floats");
    }
  }
  return l;
}

}  // namespace caffe2
