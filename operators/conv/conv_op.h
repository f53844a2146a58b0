// Conv (also registered as Conv1D, Conv2D, Conv3D): [X, filter, bias?] -> [Y] (spec ops §1.2.2).
//
//   NCHW: X (N, C, in...), filter (M, C / group, k...), bias (M), Y (N, M, out...), 1 to 3 spatial
//   dims NHWC: X (N, in..., C), filter (M, k..., C), bias (M), Y (N, out..., M), group 1 only Y[n,
//   m, o] = bias[m] + sum over c in m's group and window offsets j of
//                filter[m, c, j] * X[n, c, o * stride - pad_head + j * dilation]   (0 outside X)
// The arguments and output sizes are ConvPoolArgs' (conv_pool_op_base.h); the filter's spatial dims
// must equal the kernel and filter.dim(1) * group must equal C, with M divisible by group.
//
// <Type>Gradient (ConvGradient, Conv2DGradient, ...): [X, filter, dY] -> outputs by case
//   with bias:              [dfilter, dbias, dX]   or [dfilter, dbias] (no_gradient_to_input=1)
//   without bias (no_bias): [dfilter, dX]          or [dfilter]
// The maker passes no_bias=1 when the forward op had no bias; dX is always last.
//
// CPU kernels: float. Engines (each its own registered kernel; core/operator.h picks one):
//   default and "EIGEN" (these classes): im2col + GEMM per image and group (a 1x1 stride-1 unpadded
//     conv skips im2col; NHWC 1x1 is one GEMM over the whole batch). When the work is large, images
//     are split across threads, or, for NCHW batches smaller than the thread count, the channels
//     and filter rows of each image. Column buffers come from the process-wide ScratchBuffer pool.
//   "DNNL" (conv_op_dnnl.h, first in the CPU engine preference when the build has oneDNN): oneDNN's
//     convolution primitives, chosen per case by a fixed rule or by opt-in timing.
// Every engine's choices are fixed functions of the case, so results never depend on the machine's
// load (docs/determinism.md).
#pragma once

#include <cstdint>
#include <vector>

#include "core/operator.h"
#include "operators/conv/conv_pool_op_base.h"

namespace caffe2 {

// The checked shapes of one Conv call, device-neutral (the CPU kernels and the cuDNN engine share
// it): the geometry plus the channel bookkeeping. Per image, X is C x I (or I x C), Y is M x P (or
// P x M); a group's filter is Mg x (Cg * K).
struct ConvShape {
  ConvPoolGeometry g;
  int64_t N, C, M, group, Cg, Mg, K, I, P;
  int64_t CgK() const { return Cg * K; }
  double Flops() const { return 2.0 * N * M * P * Cg * K; }
};

// Resolves the geometry for X dims `x` and checks the filter dims `w` against it (rank, channels
// per group, M divisible by group, spatial dims equal to the kernel). Errors name the dims.
ConvShape CheckConvShapes(const ConvPoolArgs& args, const std::vector<int64_t>& x,
                          const std::vector<int64_t>& w);

// The schema functions of Conv, shared with ConvRelu (conv_relu_op.cc).
std::vector<TensorShape> ConvInference(const OperatorDef& def, const std::vector<TensorShape>& in);
OpSchema::Cost ConvCost(const OperatorDef& def, const std::vector<TensorShape>& in);

// Checks the inputs, sizes Y and hands the computation to Compute. With `relu` (ConvRelu), Y is
// max(0, conv): applied by Compute when ComputeAppliesRelu(), else after it.
class ConvOp : public Operator<CPUContext> {
 public:
  ConvOp(const OperatorDef& def, Workspace* ws, bool relu = false);
  bool RunOnDevice() final;

 protected:
  // Y = conv(X, W) + bias (bias may be null) for checked shapes, Y sized and not empty: im2col +
  // GEMM.
  virtual void Compute(const ConvShape& s, const float* x, const float* w, const float* bias,
                       float* y);
  virtual bool ComputeAppliesRelu() const { return false; }
  const ConvPoolArgs& args() const { return args_; }
  bool relu() const { return relu_; }

 private:
  ConvPoolArgs args_;
  bool relu_;
};

// y = max(0, y), in place.
void ReluInPlace(float* y, int64_t n);

// Checks the inputs, sizes the outputs and hands the computation to Compute (an empty dY gives
// zeros without it).
class ConvGradientOp : public Operator<CPUContext> {
 public:
  ConvGradientOp(const OperatorDef& def, Workspace* ws);
  bool RunOnDevice() final;

 protected:
  // Overwrites dW, dbias (may be null) and dX (may be null) for checked shapes: im2col + GEMM.
  virtual void Compute(const ConvShape& s, const float* x, const float* w, const float* dy,
                       float* dw, float* db, float* dx);
  const ConvPoolArgs& args() const { return args_; }

 private:
  ConvPoolArgs args_;
  bool no_bias_;
};

}  // namespace caffe2
