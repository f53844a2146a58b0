// im2col / col2im for one image on the CPU, over the 3-D form of a conv geometry (1-D and 2-D
// geometries have leading size-1 dims, see ConvPoolGeometry::As3D). K = kd*kh*kw, P = od*oh*ow.
//
// Channel-first (NCHW): x is (C, id, ih, iw); col is (C*K, P), row (c, kd, kh, kw), column the
// output position, holding x at (o*stride - pad + k*dilation) or 0 outside the image.
// Channel-last (NHWC): x is (id, ih, iw, C); col is (P, K*C), row the output position, column
// (kd, kh, kw, c).
// Col2Im* is the transpose: it ADDS every col entry into its x position (x must be zeroed first).
#pragma once

#include <cstdint>

#include "operators/conv/conv_pool_op_base.h"

namespace caffe2 {

void Im2ColNCHW(const float* x, int64_t C, const ConvPoolGeometry::Dims3& g, float* col);
void Col2ImNCHW(const float* col, int64_t C, const ConvPoolGeometry::Dims3& g, float* x);
void Im2ColNHWC(const float* x, int64_t C, const ConvPoolGeometry::Dims3& g, float* col);
void Col2ImNHWC(const float* col, int64_t C, const ConvPoolGeometry::Dims3& g, float* x);

}  // namespace caffe2
