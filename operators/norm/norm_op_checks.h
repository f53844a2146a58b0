// Argument and input checks shared by the CPU kernels of LayerNorm, InstanceNorm and their
// gradients (layer_norm_op.cc, instance_norm_op.cc; the contracts are there) and their CUDA kernels
// (norm_ops.cu), so both devices refuse the same inputs with the same messages.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/operator.h"
#include "operators/norm/spatial_bn_op.h"

namespace caffe2 {

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
  C2_ENFORCE(ax >= 0 && ax < X.ndim(), "axis ", axis, " out of range for X ", Tensor::DimsString(X.dims()));
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
             " and stdev ", Tensor::DimsString(stdev.dims()), " must hold one value per row (", v.M, ")");
  return v;
}

// InstanceNorm's and InstanceNormGradient's X (float, rank 3 to 5), scale and bias (C floats each).
inline ChannelLayout CheckInstanceNormInputs(const OperatorBase& op, const Tensor& X, const std::string& order) {
  const ChannelLayout l = GetChannelLayout(X, order);
  for (int i = 1; i <= 2; ++i) {
    C2_ENFORCE(op.Input(i).IsType<float>() && op.Input(i).numel() == l.C, i == 1 ? "scale" : "bias", " ",
               Tensor::DimsString(op.Input(i).dims()), " must hold ", l.C, " floats (one per channel)");
  }
  return l;
}

// InstanceNormGradient's [X, scale, bias, dY, (mean, inv_std)].
inline ChannelLayout CheckInstanceNormGradientInputs(const OperatorBase& op, const std::string& order) {
  const Tensor& X = op.Input(0);
  const Tensor& dY = op.Input(3);
  const ChannelLayout l = CheckInstanceNormInputs(op, X, order);
  C2_ENFORCE(dY.dims() == X.dims(), "dY ", Tensor::DimsString(dY.dims()), " must be shaped like X ",
             Tensor::DimsString(X.dims()));
  if (op.InputSize() == 6) {
    for (int i = 4; i <= 5; ++i) {
      C2_ENFORCE(op.Input(i).IsType<float>() && op.Input(i).numel() == l.N * l.C, i == 4 ? "mean" : "inv_std",
                 " ", Tensor::DimsString(op.Input(i).dims()), " must hold N x C = ", l.N * l.C, " floats");
    }
  }
  return l;
}

}  // namespace caffe2
