#include "operators/conv/im2col.h"

#include <algorithm>
#include <cstring>

namespace caffe2 {

namespace {

using Dims3 = ConvPoolGeometry::Dims3;

// The outputs o in [*lo, *hi) whose input index o * stride + offset lies in [0, in).
inline void ValidRange(int64_t offset, int stride, int64_t in, int64_t out, int64_t* lo,
                       int64_t* hi) {
  int64_t l = offset >= 0 ? 0 : (-offset + stride - 1) / stride;
  int64_t h = in - offset <= 0 ? 0 : (in - offset + stride - 1) / stride;
  l = std::min(l, out);
  h = std::max(l, std::min(h, out));
  *lo = l;
  *hi = h;
}

// One walk serves both directions: kToCol copies x into col (zeros outside the image), otherwise
// col is added into x. x is only written when !kToCol.
template <bool kToCol>
void ChannelFirst(float* x, int64_t C, const Dims3& g, float* col) {
  const int64_t ID = g.in[0], IH = g.in[1], IW = g.in[2];
  const int64_t OD = g.out[0], OH = g.out[1], OW = g.out[2];
  const int sd = g.stride[0], sh = g.stride[1], sw = g.stride[2];
  const int64_t P = OD * OH * OW;
  float* row = col;
  for (int64_t c = 0; c < C; ++c) {
    float* xc = x + c * ID * IH * IW;
    for (int kd = 0; kd < g.kernel[0]; ++kd) {
      const int64_t offd = static_cast<int64_t>(kd) * g.dilation[0] - g.pad[0];
      int64_t dlo, dhi;
      ValidRange(offd, sd, ID, OD, &dlo, &dhi);
      for (int kh = 0; kh < g.kernel[1]; ++kh) {
        const int64_t offh = static_cast<int64_t>(kh) * g.dilation[1] - g.pad[1];
        int64_t hlo, hhi;
        ValidRange(offh, sh, IH, OH, &hlo, &hhi);
        for (int kw = 0; kw < g.kernel[2]; ++kw, row += P) {
          const int64_t offw = static_cast<int64_t>(kw) * g.dilation[2] - g.pad[2];
          int64_t wlo, whi;
          ValidRange(offw, sw, IW, OW, &wlo, &whi);
          for (int64_t od = 0; od < OD; ++od) {
            float* rd = row + od * OH * OW;
            if (od < dlo || od >= dhi) {
              if (kToCol) std::fill(rd, rd + OH * OW, 0.f);
              continue;
            }
            const int64_t id = od * sd + offd;
            for (int64_t oh = 0; oh < OH; ++oh) {
              float* r = rd + oh * OW;
              if (oh < hlo || oh >= hhi) {
                if (kToCol) std::fill(r, r + OW, 0.f);
                continue;
              }
              float* xr = xc + (id * IH + oh * sh + offh) * IW;
              if (kToCol) {
                std::fill(r, r + wlo, 0.f);
                if (sw == 1) {
                  std::memcpy(r + wlo, xr + wlo + offw, sizeof(float) * (whi - wlo));
                } else {
                  for (int64_t ow = wlo; ow < whi; ++ow) r[ow] = xr[ow * sw + offw];
                }
                std::fill(r + whi, r + OW, 0.f);
              } else {
                for (int64_t ow = wlo; ow < whi; ++ow) xr[ow * sw + offw] += r[ow];
              }
            }
          }
        }
      }
    }
  }
}

template <bool kToCol>
void ChannelLast(float* x, int64_t C, const Dims3& g, float* col) {
  const int64_t ID = g.in[0], IH = g.in[1], IW = g.in[2];
  float* dst = col;
  for (int64_t od = 0; od < g.out[0]; ++od) {
    for (int64_t oh = 0; oh < g.out[1]; ++oh) {
      for (int64_t ow = 0; ow < g.out[2]; ++ow) {
        for (int kd = 0; kd < g.kernel[0]; ++kd) {
          const int64_t id = od * g.stride[0] - g.pad[0] + static_cast<int64_t>(kd) * g.dilation[0];
          for (int kh = 0; kh < g.kernel[1]; ++kh) {
            const int64_t ih =
                oh * g.stride[1] - g.pad[1] + static_cast<int64_t>(kh) * g.dilation[1];
            for (int kw = 0; kw < g.kernel[2]; ++kw, dst += C) {
              const int64_t iw =
                  ow * g.stride[2] - g.pad[2] + static_cast<int64_t>(kw) * g.dilation[2];
              const bool inside = id >= 0 && id < ID && ih >= 0 && ih < IH && iw >= 0 && iw < IW;
              if (!inside) {
                if (kToCol) std::fill(dst, dst + C, 0.f);
                continue;
              }
              float* src = x + ((id * IH + ih) * IW + iw) * C;
              if (kToCol) {
                std::memcpy(dst, src, sizeof(float) * C);
              } else {
                for (int64_t c = 0; c < C; ++c) src[c] += dst[c];
              }
            }
          }
        }
      }
    }
  }
}

}  // namespace

void Im2ColNCHW(const float* x, int64_t C, const Dims3& g, float* col) {
  ChannelFirst<true>(const_cast<float*>(x), C, g, col);
}

void Col2ImNCHW(const float* col, int64_t C, const Dims3& g, float* x) {
  ChannelFirst<false>(x, C, g, const_cast<float*>(col));
}

void Im2ColNHWC(const float* x, int64_t C, const Dims3& g, float* col) {
  ChannelLast<true>(const_cast<float*>(x), C, g, col);
}

void Col2ImNHWC(const float* col, int64_t C, const Dims3& g, float* x) {
  ChannelLast<false>(x, C, g, const_cast<float*>(col));
}

}  // namespace caffe2
