// The oneDNN path of the CPU Conv and ConvGradient kernels (conv_op.h gives the math).
//
// Each function runs the whole op with oneDNN and returns true, or returns false without writing
// anything when it cannot: this build has no oneDNN (no_dnnl.cc), the order is not NCHW, or oneDNN
// only offers its slow reference kernel for the case. The caller then runs its im2col path.
// Supported: NCHW with 1 to 3 spatial dims, any kernel, stride, dilation, asymmetric pads and group.
//
// The primitives are created on the first call for a shape and cached per thread (key: every dim
// and argument). For each pass (forward, backward data, backward weights) the variants oneDNN offers
// are timed on that call (logged at INFO) and the fastest kept: plain NCHW tensors given to oneDNN,
// oneDNN's preferred (blocked) layouts with reorders to and from NCHW around the primitive
// (ConvGradient's two passes share the reorder of dY), and for the forward pass the Winograd
// algorithm (3x3, stride 1; its rounding differs from direct convolution by about 1e-6 relative). Filters are always in oneDNN's preferred layout, reordered on
// every call (they change every training step). The primitives run on MaxKernelThreads() OpenMP
// threads.
#pragma once

#include <cstdint>

#include "operators/nn/conv_pool_op_base.h"

namespace caffe2 {

// Y = conv(X, W) + bias (bias may be null); M output channels.
bool DnnlConvForward(const ConvPoolGeometry& g, int64_t M, int group, const float* x, const float* w,
                     const float* bias, float* y);

// dW (overwritten), dbias (may be null; overwritten) and dX (may be null; overwritten) from X, W, dY.
bool DnnlConvBackward(const ConvPoolGeometry& g, int64_t M, int group, const float* x, const float* w,
                      const float* dy, float* dw, float* dbias, float* dx);

}  // namespace caffe2
