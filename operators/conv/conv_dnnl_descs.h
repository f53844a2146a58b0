// The oneDNN descriptions of one convolution call (plain NCW/NCHW/NCDHW activations, OIHW or GOIHW
// filters, a bias vector) and its window arguments, shared by the DNNL engine of Conv
// (conv_op_dnnl.cc) and the blocked-layout inference ops (operators/dnnl/).
#pragma once

#include <oneapi/dnnl/dnnl.hpp>

#include "operators/conv/conv_pool_op_base.h"

namespace caffe2 {

// The plain (caller's) layouts and the window arguments of one call, in oneDNN's terms.
struct ConvDescs {
  dnnl::memory::desc src, wei, bias, dst;
  dnnl::memory::dims strides, dilates, pad_l, pad_r;
  bool has_bias = false;
};

inline ConvDescs Describe(const ConvPoolGeometry& g, int64_t M, int64_t group, bool has_bias) {
  using Tag = dnnl::memory::format_tag;
  static const Tag kAct[] = {Tag::ncw, Tag::nchw, Tag::ncdhw};
  static const Tag kWei[] = {Tag::oiw, Tag::oihw, Tag::oidhw};
  static const Tag kGroupWei[] = {Tag::goiw, Tag::goihw, Tag::goidhw};
  const int nd = g.spatial_dims();
  ConvDescs d;
  dnnl::memory::dims src{g.N, g.C}, dst{g.N, M};
  dnnl::memory::dims wei =
      group > 1 ? dnnl::memory::dims{group, M / group, g.C / group} : dnnl::memory::dims{M, g.C};
  for (int i = 0; i < nd; ++i) {
    src.push_back(g.in[i]);
    dst.push_back(g.out[i]);
    wei.push_back(g.kernel[i]);
    d.strides.push_back(g.stride[i]);
    d.dilates.push_back(g.dilation[i] - 1);  // oneDNN counts the gaps
    d.pad_l.push_back(g.pad_head[i]);
    d.pad_r.push_back(g.pad_tail[i]);
  }
  const auto f32 = dnnl::memory::data_type::f32;
  d.src = dnnl::memory::desc(src, f32, kAct[nd - 1]);
  d.dst = dnnl::memory::desc(dst, f32, kAct[nd - 1]);
  d.wei = dnnl::memory::desc(wei, f32, group > 1 ? kGroupWei[nd - 1] : kWei[nd - 1]);
  d.bias = dnnl::memory::desc({M}, f32, Tag::x);
  d.has_bias = has_bias;
  return d;
}

}  // namespace caffe2
