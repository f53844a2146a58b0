// The argument and input checks and the scale rule of the loss-scaling ops (contract in
// loss_scale_ops.cc), shared by their CPU and CUDA kernels.
#pragma once

#include <algorithm>
#include <cstdint>

#include "core/operator.h"
#include "operators/common/host_device.h"

namespace caffe2 {

struct LossScaleArgs {
  float growth_factor, backoff_factor;
  int64_t growth_interval;
  float min_scale, max_scale;
};

// A loss scale is a one-element float tensor; LossScaleValue reads one held on the host.
void CheckLossScale(const Tensor& scale);
float LossScaleValue(const Tensor& scale);
// Gradient input i (1-based, after S) is float or float16 (the schema makes it output i - 1).
void CheckUnscaleInputs(const OperatorBase& op, int i);
LossScaleArgs ReadLossScaleArgs(const OperatorBase& op);
// Types, sizes and in-place rules of UpdateLossScale's inputs (S's value is not read).
void CheckUpdateLossScaleInputs(const OperatorBase& op);

// One step of the scale rule on the scale and the good-step count.
C2_HOST_DEVICE inline void StepLossScale(const LossScaleArgs& a, bool found_nonfinite, float* scale,
                                         int64_t* good_steps) {
  if (found_nonfinite) {
    const float s = *scale * a.backoff_factor;
    *scale = s < a.min_scale ? a.min_scale : s;
    *good_steps = 0;
    return;
  }
  if (++*good_steps >= a.growth_interval) {
    const float s = *scale * a.growth_factor;
    *scale = s > a.max_scale ? a.max_scale : s;
    *good_steps = 0;
  }
}

}  // namespace caffe2
