// The DNNL engine of Conv and ConvGradient on the CPU: the math, shapes and outputs are
// conv_op.h's. Registered as <Type>_ENGINE_DNNL for Conv, Conv1D/2D/3D and their Gradient types,
// and first in the CPU engine preference (core/operator.h) when the build has oneDNN, so nets use
// it unless they name another engine (engine="EIGEN" runs the default im2col kernel). NCHW only:
// for NHWC the constructor declines and the op falls back to the default engine.
//
// Each pass of a case (forward; backward weights; backward data) runs one variant:
//   gemm      im2col + GEMM (oneDNN's sgemm), the default engine's path
//   direct    oneDNN's direct convolution on the caller's plain NCHW tensors
//   blocked   oneDNN's direct convolution in the layouts it prefers, reordered to and from NCHW
//   winograd  oneDNN's Winograd convolution (3x3, stride 1; rounding differs from direct by ~1e-6)
// A case is every dim and argument of the call plus the kernel thread count. The variant comes
// from, in order: a record of the autotune cache (core/autotune_cache.h); timing every variant on
// the first call of the case when exhaustive_search is on (the argument, or
// --caffe2_exhaustive_search), the choice then recorded; otherwise the fixed rule of conv_policy.h.
// So the choice never depends on the machine's load unless timing was asked for, and a process
// given the cache file of a tuning process computes exactly what that process computed. A variant
// that oneDNN offers only as its reference kernel, or not at all, is never used. The backward
// passes are chosen together: "gemm" for both, or a oneDNN variant for each ("blocked+winograd").
//
// Plans (primitives and reorders) are cached per thread and case. The primitives run on
// MaxKernelThreads() OpenMP threads.
#pragma once

#include "operators/conv/conv_op.h"

namespace caffe2 {

// With `relu` (ConvRelu_ENGINE_DNNL), the oneDNN variants apply max(0, y) as a post-op of the
// convolution, and the gemm variant after its GEMM.
class DnnlConvOp : public ConvOp {
 public:
  DnnlConvOp(const OperatorDef& def, Workspace* ws, bool relu = false);

 private:
  void Compute(const ConvShape& s, const float* x, const float* w, const float* bias,
               float* y) override;
  bool ComputeAppliesRelu() const override { return true; }
  // The gemm variant: ConvOp's im2col + GEMM, then the relu if any.
  void GemmForward(const ConvShape& s, const float* x, const float* w, const float* bias, float* y);
  bool exhaustive_search_;
};

class DnnlConvGradientOp final : public ConvGradientOp {
 public:
  DnnlConvGradientOp(const OperatorDef& def, Workspace* ws);

 private:
  void Compute(const ConvShape& s, const float* x, const float* w, const float* dy, float* dw,
               float* db, float* dx) override;
  bool exhaustive_search_;
};

}  // namespace caffe2
