// The CUDA kernels of the cuDNN SpatialBN ops (spatial_bn_op_cudnn.cc), defined in
// spatial_bn_op.cu. They cover what cuDNN's batch normalization does not: the CPU op's
// running-statistics update (biased variance; cuDNN's own update uses the unbiased one), statistics
// from the aggregated sums of num_batches > 1, and the gradient of test mode and of aggregated
// statistics. All vectors hold C floats; x, dy, dx hold N * C * S floats, NCHW (n, c, s) or NHWC
// (n, s, c). Launched on `stream`.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

namespace caffe2 {

// running = running * momentum + batch * (1 - momentum), the batch variance recovered from the
// saved inverse std as max(0, 1 / inv_std^2 - epsilon).
void SpatialBNRunningUpdateCUDA(int64_t C, float momentum, float epsilon, const float* saved_mean,
                                const float* saved_inv_std, float* running_mean, float* running_var,
                                cudaStream_t stream);

// From per-channel sums and sums of squares over `count` values: mean, biased variance
// max(0, sumsq / count - mean^2) (in double), saved_mean, saved_inv_std = 1 / sqrt(var + epsilon),
// batch_var, and the running update as above.
void SpatialBNStatsFromSumsCUDA(int64_t C, double count, float momentum, float epsilon,
                                const float* sums, const float* sumsq, float* saved_mean,
                                float* saved_inv_std, float* batch_var, float* running_mean,
                                float* running_var, cudaStream_t stream);

// inv_std = 1 / sqrt(var + epsilon).
void SpatialBNInvStdCUDA(int64_t C, float epsilon, const float* var, float* inv_std,
                         cudaStream_t stream);

// y = x * alpha (y may be x).
void SpatialBNScaleCUDA(int64_t n, float alpha, const float* x, float* y, cudaStream_t stream);

// dbias = sum(dy), dscale = sum((x - mean) * dy) * inv_std per channel (accumulated in double).
void SpatialBNBackpropSumsCUDA(int64_t N, int64_t C, int64_t S, bool nchw, const float* x,
                               const float* dy, const float* mean, const float* inv_std,
                               float* dscale, float* dbias, cudaStream_t stream);

// test: dx = scale * inv_std * dy;
// train: dx = scale * inv_std * (dy - dbias * inv_m - (x - mean) * inv_std * dscale * inv_m).
void SpatialBNBackwardDxCUDA(int64_t N, int64_t C, int64_t S, bool nchw, bool test, float inv_m,
                             const float* x, const float* dy, const float* scale, const float* mean,
                             const float* inv_std, const float* dscale, const float* dbias,
                             float* dx, cudaStream_t stream);

}  // namespace caffe2
