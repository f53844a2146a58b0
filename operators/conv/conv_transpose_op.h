// ConvTranspose: [X, filter, bias?] -> [Y] (spec ops §1.3), the gradient of Conv with respect to
// its input used as a forward op ("deconvolution").
//
//   NCHW: X (N, C, in...), filter (C, M / group, k...), bias (M), Y (N, M, out...), 1 to 3 spatial
//   dims NHWC: X (N, in..., C), filter (C, k..., M), bias (M), Y (N, out..., M), group 1 only out =
//   (in - 1) * stride + dilation * (k - 1) + 1 + adj - pad_head - pad_tail Y[n, m, i * stride -
//   pad_head + j * dilation] += X[n, c, i] * filter[c, m, j] (+ bias[m]) over the channels c of m's
//   group
// Arguments: those of Conv (conv_pool_op_base.h) plus adj | adj_h + adj_w | adjs (default 0, at
// most the stride). legacy_pad VALID and SAME both mean no pads (as upstream); CAFFE_LEGACY_POOLING
// is an error.
//
// ConvTransposeGradient: [X, filter, dY] -> [dfilter, dbias, dX], with the same variants as
// ConvGradient: no_bias=1 drops dbias, no_gradient_to_input=1 on the forward op drops dX.
//
// CPU kernel: float; per image and group, GEMM into columns then col2im (1x1 stride-1 unpadded
// skips the columns); images split across threads when the work is large.
#pragma once

#include "core/operator.h"
#include "operators/conv/conv_pool_op_base.h"

namespace caffe2 {

class ConvTransposeOp final : public Operator<CPUContext> {
 public:
  ConvTransposeOp(const OperatorDef& def, Workspace* ws);
  bool RunOnDevice() override;

 private:
  ConvPoolArgs args_;
};

class ConvTransposeGradientOp final : public Operator<CPUContext> {
 public:
  ConvTransposeGradientOp(const OperatorDef& def, Workspace* ws);
  bool RunOnDevice() override;

 private:
  ConvPoolArgs args_;
  bool no_bias_;
};

}  // namespace caffe2
