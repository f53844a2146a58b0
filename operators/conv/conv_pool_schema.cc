#include "operators/conv/conv_pool_schema.h"

namespace caffe2 {

OpSchema& AddConvPoolArgs(OpSchema& schema) {
  return schema
      .Arg("kernel",
           "(int) window size along every spatial dim; kernel, kernel_h/kernel_w or kernels is "
           "required unless global_pooling")
      .Arg("kernel_h", "(int) window height of a 2-D input, given together with kernel_w")
      .Arg("kernel_w", "(int) window width of a 2-D input, given together with kernel_h")
      .Arg("kernels", "(list of int) window size per spatial dim")
      .Arg("stride", "(int, default 1) step between windows along every spatial dim")
      .Arg("stride_h", "(int, default 1) step along the height of a 2-D input, with stride_w")
      .Arg("stride_w", "(int, default 1) step along the width of a 2-D input, with stride_h")
      .Arg("strides", "(list of int, default 1 per dim) step per spatial dim")
      .Arg("dilation", "(int, default 1) distance between the window's taps along every dim")
      .Arg("dilation_h",
           "(int, default 1) tap distance along a 2-D input's height, with dilation_w")
      .Arg("dilation_w", "(int, default 1) tap distance along a 2-D input's width, with dilation_h")
      .Arg("dilations", "(list of int, default 1 per dim) tap distance per spatial dim")
      .Arg("pad", "(int, default 0) zero padding at both ends of every spatial dim")
      .Arg("pad_t", "(int, default 0) padding above a 2-D input, with pad_l, pad_b and pad_r")
      .Arg("pad_l", "(int, default 0) padding left of a 2-D input, with pad_t, pad_b and pad_r")
      .Arg("pad_b", "(int, default 0) padding below a 2-D input, with pad_t, pad_l and pad_r")
      .Arg("pad_r", "(int, default 0) padding right of a 2-D input, with pad_t, pad_l and pad_b")
      .Arg("pads",
           "(list of int, default 0) the head pad of every spatial dim, then the tail pads: "
           "[t, l, b, r] for a 2-D input")
      .Arg("order", "(string, default \"NCHW\") layout of X and Y: \"NCHW\" or \"NHWC\"")
      .Arg("legacy_pad",
           "(int, default 0) padding rule: 0 NOTSET (the explicit pads), 1 VALID (none), 2 SAME "
           "(out = ceil(in / stride), dilation 1), 3 CAFFE_LEGACY_POOLING (Caffe's rounded-up "
           "output size); VALID and SAME take no explicit pads")
      .Arg("shared_buffer",
           "(int, default 0) upstream's request to share the im2col buffer between ops; "
           "accepted and ignored (each op keeps its own scratch)")
      .Arg("global_pooling",
           "(bool, default 0) the window is the whole spatial input; pads 0, strides 1 and "
           "dilations 1 only");
}

OpSchema& AddCudnnConvArgs(OpSchema& schema) {
  return schema
      .Arg("exhaustive_search",
           "(bool, default 0) CUDNN and DNNL engines: time the candidate algorithms on a shape's "
           "first run and keep the fastest (recorded in the autotune cache) instead of the fixed "
           "choice; also --caffe2_exhaustive_search")
      .Arg("ws_nbytes_limit",
           "(int, default 67108864 = 64 MiB) CUDNN engine: the most workspace, in bytes, an "
           "algorithm may use")
      .Arg("deterministic",
           "(bool, default 1) CUDNN engine: only algorithms cuDNN reports deterministic")
      .Arg("allow_tf32",
           "(bool, default 0) CUDNN engine: float32 data may use TF32 tensor cores (about 1e-3 "
           "relative error) instead of strict fp32")
      .Arg("float16_compute",
           "(bool, default 0) CUDNN engine: float16 data accumulates in float16, not float32")
      .Arg("enable_tensor_core",
           "(bool, default 1) CUDNN engine: float16 data may use tensor cores");
}

OpSchema& AddConvTransposeArgs(OpSchema& schema) {
  return schema
      .Arg("adj",
           "(int, default 0) extra output size at the tail of every spatial dim, at most the "
           "stride")
      .Arg("adj_h", "(int, default 0) extra output height of a 2-D input, with adj_w")
      .Arg("adj_w", "(int, default 0) extra output width of a 2-D input, with adj_h")
      .Arg("adjs", "(list of int, default 0 per dim) extra output size per spatial dim");
}

}  // namespace caffe2
