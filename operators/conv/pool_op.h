// Pooling (spec ops §1.2.3): [X] -> [Y], NCHW with 1 to 3 spatial dims or NHWC, with the arguments
// and output sizes of ConvPoolArgs (conv_pool_op_base.h), including global_pooling.
//
//   MaxPool (also MaxPool1D/2D/3D)          Y = max of the window's in-bounds elements
//   AveragePool (also AveragePool1D/2D/3D)  Y = mean of the window's in-bounds elements (padding is
//                                           never counted, as cuDNN's COUNT_EXCLUDE_PADDING)
//   LpPool (arg p, float, default 2.0)      Y = (sum of |x|^p over the in-bounds elements)^(1/p)
// A window that lies entirely in the padding (pad >= kernel) gives 0.
//
// <Type>Gradient: [X, Y, dY] -> [dX].
//   Max: every in-bounds element equal to its window's max receives dY (ties all receive it).
//   Average: each in-bounds element receives dY / (number of in-bounds elements).
//   Lp: dX = dY * sign(x) |x|^(p-1) / Y^(p-1) (0 where Y is 0).
//
// CPU kernel: float; NCHW runs per (image, channel) plane, NHWC per image with the channel as the
// inner loop; planes or images are split across threads when the work is large.
#pragma once

#include "core/operator.h"
#include "operators/conv/conv_pool_op_base.h"

namespace caffe2 {

enum class PoolKind { kMax, kAverage, kLp };

template <PoolKind kKind>
class PoolOp final : public Operator<CPUContext> {
 public:
  PoolOp(const OperatorDef& def, Workspace* ws);
  bool RunOnDevice() override;

 private:
  ConvPoolArgs args_;
  float p_;  // LpPool's exponent
};

template <PoolKind kKind>
class PoolGradientOp final : public Operator<CPUContext> {
 public:
  PoolGradientOp(const OperatorDef& def, Workspace* ws);
  bool RunOnDevice() override;

 private:
  ConvPoolArgs args_;
  float p_;
};

}  // namespace caffe2
