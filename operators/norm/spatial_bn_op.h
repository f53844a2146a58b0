// SpatialBN (spec ops §1.2.4): batch normalization over N and all spatial dims, per channel.
//   Inputs  [X, scale, bias, mean, var, sums?, sumsq?]; X is (N, C, spatial...) for order NCHW or
//           (N, spatial..., C) for NHWC, rank 3 to 5; scale, bias, mean, var hold C floats.
//   Outputs test (is_test=1): [Y]; training: [Y, running_mean, running_var, saved_mean,
//   saved_inv_std],
//           running_mean/var the same blobs as inputs 3/4 (enforced in place), Y may overwrite X.
//   Args    is_test (0), epsilon (1e-5, > 0), momentum (0.9, in [0, 1]), order (NCHW), num_batches
//   (1). Test:   Y = (X - mean) / sqrt(var + epsilon) * scale + bias. Train:  batch mean and biased
//   variance over M = N * spatial values per channel; with
//           num_batches > 1 they come from the aggregated sums/sumsq over M * num_batches values.
//           running = running * momentum + batch * (1 - momentum) (zero-initialized when not C
//           long); saved_inv_std = 1 / sqrt(var + epsilon); Y = (X - mean) * saved_inv_std * scale
//           + bias.
// SpatialBNGradient: [X, scale, dY, saved_mean, saved_inv_std (, dscale_agg, dbias_agg)] in
// training,
//   [X, scale, dY, mean, var] in test mode -> [dX, dscale, dbias].
//   dbias = sum(dY), dscale = sum((X - mean) * inv_std * dY) (the aggregates / num_batches when
//   given), train dX = scale * inv_std / M * (M * dY - dbias - (X - mean) * inv_std * dscale), test
//   dX = scale * inv_std * dY.
//
// The per-channel reductions are shared with ChannelStats and ChannelBackpropStats.
#pragma once

#include <cstdint>
#include <string>

#include "core/tensor.h"

namespace caffe2 {

struct ChannelLayout {
  int64_t N = 0, C = 0, S = 0;  // batch, channels, spatial size
  bool nchw = true;
};

// Validates a float X of rank 3..5 and reads N, C and the spatial size for `order` ("NCHW"/"NHWC").
ChannelLayout GetChannelLayout(const Tensor& X, const std::string& order);
// True for "NCHW", false for "NHWC"; anything else is an error.
bool ParseOrderIsNCHW(const std::string& order);
// Per-channel sum and sum of squares of x (accumulated in double).
void ChannelSums(const float* x, const ChannelLayout& l, double* sum, double* sumsq);
// Per-channel dbias = sum(dy) and dscale = sum((x - mean) * inv_std * dy).
void ChannelBackpropSums(const float* x, const float* dy, const float* mean, const float* inv_std,
                         const ChannelLayout& l, float* dscale, float* dbias);

}  // namespace caffe2
