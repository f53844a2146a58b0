// The device code ChannelStats and ChannelBackpropStats share (channel_stats_op.cu,
// channel_backprop_stats_op.cu): per-channel sums over N and the spatial dims run by SumOver
// (operators/common/reduce_cuda.cuh), accumulated in double like the CPU kernels. NCHW is the
// (N, C, S) view, NHWC the (N * S, C, 1) view.
#pragma once

#include "core/cuda/cuda_context.h"
#include "core/operator.h"
#include "operators/common/reduce_cuda.cuh"
#include "operators/norm/spatial_bn_op.h"

namespace caffe2 {

struct ReadValue {
  const float* x;
  __device__ double operator()(int64_t i, int64_t) const { return x[i]; }
};

// The (pre, C, post) view of a channel layout.
inline void ChannelView(const ChannelLayout& l, int64_t* pre, int64_t* post) {
  *pre = l.nchw ? l.N : l.N * l.S;
  *post = l.nchw ? l.S : 1;
}

}  // namespace caffe2
