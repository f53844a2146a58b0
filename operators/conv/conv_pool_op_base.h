// Arguments and output geometry shared by convolution and pooling (spec ops §1.2.1),
// device-neutral.
//
// Arguments (all optional unless noted):
//   order            "NCHW" (default) or "NHWC"
//   kernel | kernel_h + kernel_w | kernels            window size per spatial dim (required unless
//                                                     global_pooling)
//   stride | stride_h + stride_w | strides            default 1
//   dilation | dilation_h + dilation_w | dilations    default 1
//   pad | pad_t + pad_l + pad_b + pad_r | pads        default 0; `pads` is [heads..., tails...], so
//   a
//                                                     2-D list is [t, l, b, r]
//   legacy_pad       0 NOTSET, 1 VALID, 2 SAME, 3 CAFFE_LEGACY_POOLING
//   global_pooling   the window is the whole input (pads 0, strides 1, dilations 1 required)
//   group            grouped convolution (Conv, ConvTranspose); group > 1 needs NCHW and dilation 1
//   adj | adj_h + adj_w | adjs                        ConvTranspose's extra output size, default 0
// The scalar forms (kernel, stride, dilation, pad) apply to every spatial dim of the input, so
// `kernel=3` works for 1-D, 2-D and 3-D inputs; the _h/_w forms are 2-D; the list forms give one
// value per spatial dim. Several forms of one quantity may be given only when they agree (the list
// form is then used); a partial _h/_w or pad_t/l/b/r set is an error, as is an explicit pad
// together with legacy_pad VALID or SAME.
//
// Output size per spatial dim, with the dilated kernel dk = dilation * (k - 1) + 1:
//   NOTSET   out = floor((in + pad_head + pad_tail - dk) / stride) + 1
//   VALID    pads 0, out = floor((in - dk) / stride) + 1
//   SAME     (dilation 1) out = ceil(in / stride); pad_needed = max(0, (out - 1) * stride + k -
//   in);
//            pad_head = pad_needed / 2, pad_tail = the rest
//   CAFFE_LEGACY_POOLING (Caffe's ceil rule, only pad_head is read):
//            out = ceil((in + 2 * pad_head - dk) / stride) + 1, minus 1 when pad_head > 0 and
//            (out - 1) * stride >= in + pad_head; pad_tail = pad_head + stride * (out - floor_out),
//            where floor_out is the NOTSET size, so the NOTSET formula reproduces `out` (the last
//            window may hang over the end of the input; pooling reads only its in-bounds part).
// In every mode an output size below 1 is an error ("kernel ... is larger than the padded input").
// Deviations from upstream, all for inputs upstream mishandles: the scalar forms apply to 1-D and
// 3-D inputs (upstream makes them 2-D); conflicting or partial forms are errors (upstream silently
// picks one); SAME clamps a negative pad_needed to 0 (same output); global_pooling works for 1-D
// and 3-D; pooling honours dilation.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "caffe2/proto/caffe2.pb.h"
#include "core/operator.h"

namespace caffe2 {

class ArgumentHelper;

enum class StorageOrder { NCHW, NHWC };
enum class LegacyPadding { NOTSET = 0, VALID = 1, SAME = 2, CAFFE_LEGACY_POOLING = 3 };

// "NCHW" / "NHWC"; anything else is an error.
StorageOrder ParseStorageOrder(const std::string& order);
const char* LegacyPaddingName(LegacyPadding p);

// Output size and pads of one spatial dim under a padding mode (see the table above). pad_head and
// pad_tail are read (NOTSET, CAFFE_LEGACY_POOLING) and written.
int64_t ConvPoolOutputSize(int64_t in, int kernel, int stride, int dilation, LegacyPadding mode,
                           int* pad_head, int* pad_tail);

// The geometry of one call: batch, channels and, per spatial dim, the input and output sizes with
// the kernel, stride, dilation and resolved pads.
struct ConvPoolGeometry {
  StorageOrder order = StorageOrder::NCHW;
  int64_t N = 0, C = 0;
  std::vector<int64_t> in, out;
  std::vector<int> kernel, stride, dilation, pad_head, pad_tail;
  std::vector<int> adj;  // ConvTranspose only

  int spatial_dims() const { return static_cast<int>(in.size()); }
  int64_t in_image_size() const;   // product of `in`
  int64_t out_image_size() const;  // product of `out`
  int64_t kernel_size() const;     // product of `kernel`
  // (N, channels, out...) for NCHW, (N, out..., channels) for NHWC.
  std::vector<int64_t> OutputDims(int64_t channels) const;
  // True when the window at every output is exactly one input element at the same position.
  bool IsPointwise() const;
  // True when padding every spatial dim by pad_head on both sides gives the same output sizes. The
  // windows then start at the same places and none reaches past the shorter of the two tail pads,
  // so a library that pads symmetrically (cuDNN) computes this geometry exactly.
  bool FitsSymmetricPads() const;

  // The same geometry with the spatial dims padded at the front to three (size 1, kernel 1,
  // stride 1, no pad), so one 3-D loop serves 1-D, 2-D and 3-D kernels.
  struct Dims3 {
    std::array<int64_t, 3> in, out;
    std::array<int, 3> kernel, stride, dilation, pad;  // pad = head pad
  };
  Dims3 As3D() const;
};

// The parsed arguments of a conv or pool op, checked when the op is created. Resolve() then checks
// them against an input and computes the geometry.
class ConvPoolArgs {
 public:
  explicit ConvPoolArgs(const ArgumentHelper& args);

  // Geometry for input dims `x` (N, C, spatial...) or (N, spatial..., C). Errors name the values.
  ConvPoolGeometry Resolve(const std::vector<int64_t>& x) const;
  // ConvTranspose's geometry for input dims `x`: `in` holds X's spatial dims and `out` Y's, with
  // out = (in - 1) * stride + dk + adj - pad_head - pad_tail (VALID and SAME: no pads, as upstream;
  // CAFFE_LEGACY_POOLING is an error). adj (adj | adj_h + adj_w | adjs, default 0) must lie in
  // [0, stride].
  ConvPoolGeometry ResolveTranspose(const std::vector<int64_t>& x) const;

  StorageOrder order() const { return order_; }
  LegacyPadding legacy_pad() const { return legacy_pad_; }
  bool global_pooling() const { return global_pooling_; }
  int group() const { return group_; }

 private:
  // One per-dim quantity: a single value for every dim (`uniform`) or one value per dim.
  struct PerDim {
    std::vector<int> values;
    bool uniform = true;
    std::string source;  // the argument it came from, for messages
  };
  static PerDim Merge(const std::vector<PerDim>& forms, const std::string& choices, int dflt);
  static PerDim Parse(const ArgumentHelper& args, const std::string& scalar, const std::string& h,
                      const std::string& w, const std::string& list, int dflt);
  static std::vector<int> Expand(const PerDim& p, int n, int per_dim, const char* what);

  StorageOrder order_;
  LegacyPadding legacy_pad_;
  bool global_pooling_;
  int group_;
  ConvPoolGeometry ResolveCommon(const std::vector<int64_t>& x) const;

  PerDim kernel_, stride_, dilation_, pads_, adj_;
  bool pads_given_ = false;
};

// Tensor inference helper: the geometry for a TensorShape input.
ConvPoolGeometry ResolveConvPoolShape(const OperatorDef& def, const TensorShape& x);

// The checks the conv and pool gradients share on every device and engine:
// - a conv gradient's outputs are [dfilter, dbias, dX?], or [dfilter, dX?] with no_bias=1;
void CheckConvGradientOutputCount(const OperatorBase& op, bool no_bias);
// - a filter has X's rank, and its spatial dims are the op's kernel (Conv and ConvTranspose);
void CheckFilterRank(const std::vector<int64_t>& w, const std::vector<int64_t>& x);
void CheckFilterKernel(const std::vector<int64_t>& w, const ConvPoolGeometry& g);
// - a gradient's dY has the forward output's dims `y_dims`;
void CheckGradientOutputShape(const Tensor& dY, const std::vector<int64_t>& y_dims);
// - a pool gradient's Y and dY both have them (those of X's pooling).
void CheckPoolGradientShapes(const Tensor& X, const Tensor& Y, const Tensor& dY,
                             const std::vector<int64_t>& y_dims);

}  // namespace caffe2
