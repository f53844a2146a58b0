#include "operators/conv/conv_pool_op_base.h"

#include <algorithm>
#include <atomic>

#include "core/argument.h"
#include "core/enforce.h"
#include "core/logging.h"
#include "core/tensor.h"

namespace caffe2 {

namespace {

// "3" for one value, "(3, 1)" for several.
std::string JoinInts(const std::vector<int>& v) {
  if (v.size() == 1) return std::to_string(v[0]);
  std::vector<int64_t> w(v.begin(), v.end());
  return Tensor::DimsString(w);
}

int64_t FloorDiv(int64_t a, int64_t b) { return a >= 0 ? a / b : -((-a + b - 1) / b); }
int64_t CeilDiv(int64_t a, int64_t b) { return -FloorDiv(-a, b); }

}  // namespace

void CheckConvGradientOutputCount(const OperatorBase& op, bool no_bias) {
  const int max_out = no_bias ? 2 : 3;
  C2_ENFORCE(op.OutputSize() >= max_out - 1 && op.OutputSize() <= max_out,
             no_bias ? "with no_bias=1 the outputs are [dfilter, dX?]"
                     : "the outputs are [dfilter, dbias, dX?] (pass no_bias=1 when the forward op "
                       "has no bias)",
             ", got ", op.OutputSize(), " outputs");
}

void CheckFilterRank(const std::vector<int64_t>& w, const std::vector<int64_t>& x) {
  C2_ENFORCE(w.size() == x.size(), "filter ", Tensor::DimsString(w), " must have ", x.size(),
             " dims like X ", Tensor::DimsString(x));
}

void CheckFilterKernel(const std::vector<int64_t>& w, const ConvPoolGeometry& g) {
  const int first = g.order == StorageOrder::NCHW ? 2 : 1;
  const std::vector<int64_t> wk(w.begin() + first, w.begin() + first + g.spatial_dims());
  const std::vector<int64_t> k(g.kernel.begin(), g.kernel.end());
  C2_ENFORCE(wk == k, "filter ", Tensor::DimsString(w), " has kernel ", Tensor::DimsString(wk),
             " but the op's kernel is ", Tensor::DimsString(k));
}

void CheckGradientOutputShape(const Tensor& dY, const std::vector<int64_t>& y_dims) {
  C2_ENFORCE(dY.dims() == y_dims, "dY ", Tensor::DimsString(dY.dims()),
             " must have the output shape ", Tensor::DimsString(y_dims));
}

void CheckPoolGradientShapes(const Tensor& X, const Tensor& Y, const Tensor& dY,
                             const std::vector<int64_t>& y_dims) {
  C2_ENFORCE(Y.dims() == y_dims && dY.dims() == y_dims, "Y ", Tensor::DimsString(Y.dims()),
             " and dY ", Tensor::DimsString(dY.dims()), " must have the output shape ",
             Tensor::DimsString(y_dims), " of X ", Tensor::DimsString(X.dims()));
}

StorageOrder ParseStorageOrder(const std::string& order) {
  if (order == "NCHW") return StorageOrder::NCHW;
  if (order == "NHWC") return StorageOrder::NHWC;
  C2_THROW("order must be \"NCHW\" or \"NHWC\", got \"", order, "\"");
}

const char* LegacyPaddingName(LegacyPadding p) {
  switch (p) {
    case LegacyPadding::NOTSET:
      return "NOTSET";
    case LegacyPadding::VALID:
      return "VALID";
    case LegacyPadding::SAME:
      return "SAME";
    case LegacyPadding::CAFFE_LEGACY_POOLING:
      return "CAFFE_LEGACY_POOLING";
  }
  return "?";
}

int64_t ConvPoolOutputSize(int64_t in, int kernel, int stride, int dilation, LegacyPadding mode,
                           int* pad_head, int* pad_tail) {
  const int64_t dk = static_cast<int64_t>(dilation) * (kernel - 1) + 1;
  switch (mode) {
    case LegacyPadding::NOTSET:
      break;
    case LegacyPadding::VALID:
      *pad_head = *pad_tail = 0;
      break;
    case LegacyPadding::SAME: {
      // Upstream lets pad_needed go negative (when stride > kernel); a negative tail pad only hides
      // input that no window reads, so clamping it to 0 gives the same output.
      const int64_t out = (in + stride - 1) / stride;
      const int64_t needed = std::max<int64_t>(0, (out - 1) * stride + kernel - in);
      *pad_head = static_cast<int>(needed / 2);
      *pad_tail = static_cast<int>(needed - needed / 2);
      return in > 0 ? out : 0;
    }
    case LegacyPadding::CAFFE_LEGACY_POOLING: {
      // Caffe rounds up, so a window may hang over the end (even past a short input when
      // stride > 1); the last window must start inside the image or the head pad.
      const int64_t span = in + 2 * static_cast<int64_t>(*pad_head) - dk;
      int64_t out = CeilDiv(span, stride) + 1;
      if (*pad_head > 0 && (out - 1) * stride >= in + *pad_head) --out;
      if (out < 1) return 0;
      const int64_t floor_out = FloorDiv(span, stride) + 1;
      if (out != floor_out) {
        static std::atomic<bool> warned{false};
        if (!warned.exchange(true)) {
          C2_LOG(Warning) << "legacy_pad CAFFE_LEGACY_POOLING gives output size " << out
                          << " where the standard rule gives " << floor_out
                          << "; the tail pad is enlarged to match";
        }
      }
      *pad_tail = static_cast<int>(*pad_head + stride * (out - floor_out));
      return out;
    }
  }
  const int64_t span = in + *pad_head + *pad_tail - dk;
  return span < 0 ? 0 : span / stride + 1;
}

int64_t ConvPoolGeometry::in_image_size() const {
  int64_t n = 1;
  for (int64_t d : in) n *= d;
  return n;
}

int64_t ConvPoolGeometry::out_image_size() const {
  int64_t n = 1;
  for (int64_t d : out) n *= d;
  return n;
}

int64_t ConvPoolGeometry::kernel_size() const {
  int64_t n = 1;
  for (int k : kernel) n *= k;
  return n;
}

std::vector<int64_t> ConvPoolGeometry::OutputDims(int64_t channels) const {
  std::vector<int64_t> dims{N};
  if (order == StorageOrder::NCHW) dims.push_back(channels);
  dims.insert(dims.end(), out.begin(), out.end());
  if (order == StorageOrder::NHWC) dims.push_back(channels);
  return dims;
}

bool ConvPoolGeometry::IsPointwise() const {
  for (int i = 0; i < spatial_dims(); ++i) {
    if (kernel[i] != 1 || stride[i] != 1 || pad_head[i] != 0 || pad_tail[i] != 0) return false;
  }
  return true;
}

bool ConvPoolGeometry::FitsSymmetricPads() const {
  for (int i = 0; i < spatial_dims(); ++i) {
    const int64_t dk = static_cast<int64_t>(dilation[i]) * (kernel[i] - 1) + 1;
    const int64_t span = in[i] + 2 * static_cast<int64_t>(pad_head[i]) - dk;
    if (span < 0 || span / stride[i] + 1 != out[i]) return false;
  }
  return true;
}

ConvPoolGeometry::Dims3 ConvPoolGeometry::As3D() const {
  Dims3 g;
  const int lead = 3 - spatial_dims();
  for (int i = 0; i < 3; ++i) {
    const int j = i - lead;
    const bool real = j >= 0;
    g.in[i] = real ? in[j] : 1;
    g.out[i] = real ? out[j] : 1;
    g.kernel[i] = real ? kernel[j] : 1;
    g.stride[i] = real ? stride[j] : 1;
    g.dilation[i] = real ? dilation[j] : 1;
    g.pad[i] = real ? pad_head[j] : 0;
  }
  return g;
}

ConvPoolArgs::PerDim ConvPoolArgs::Merge(const std::vector<PerDim>& forms,
                                         const std::string& choices, int dflt) {
  if (forms.empty()) return PerDim{{dflt}, true, ""};
  const PerDim* chosen = &forms[0];
  for (const PerDim& f : forms) {
    if (!f.uniform) {
      chosen = &f;
      break;
    }
  }
  const auto agree = [](const PerDim& a, const PerDim& b) {
    if (a.uniform || b.uniform) {
      const PerDim& list = a.uniform ? b : a;
      const int v = a.uniform ? a.values[0] : b.values[0];
      return std::all_of(list.values.begin(), list.values.end(), [v](int x) { return x == v; });
    }
    return a.values == b.values;
  };
  for (const PerDim& f : forms) {
    C2_ENFORCE(agree(f, *chosen), chosen->source, " = ", JoinInts(chosen->values), " and ",
               f.source, " = ", JoinInts(f.values), " disagree; give one of ", choices);
  }
  return *chosen;
}

ConvPoolArgs::PerDim ConvPoolArgs::Parse(const ArgumentHelper& args, const std::string& scalar,
                                         const std::string& h, const std::string& w,
                                         const std::string& list, int dflt) {
  std::vector<PerDim> forms;
  if (args.HasArgument(list)) {
    forms.push_back({args.GetRepeatedArgument<int>(list), false, "'" + list + "'"});
    C2_ENFORCE(!forms.back().values.empty(), "'", list, "' must not be empty");
  }
  if (args.HasArgument(scalar)) {
    forms.push_back({{args.GetSingleArgument<int>(scalar, dflt)}, true, "'" + scalar + "'"});
  }
  const bool has_h = args.HasArgument(h), has_w = args.HasArgument(w);
  if (has_h || has_w) {
    C2_ENFORCE(has_h && has_w, "'", h, "' and '", w, "' must be given together, got only '",
               has_h ? h : w, "'");
    forms.push_back({{args.GetSingleArgument<int>(h, dflt), args.GetSingleArgument<int>(w, dflt)},
                     false,
                     "'" + h + "'/'" + w + "'"});
  }
  return Merge(forms, "'" + scalar + "', '" + h + "'/'" + w + "' or '" + list + "'", dflt);
}

ConvPoolArgs::ConvPoolArgs(const ArgumentHelper& args)
    : order_(ParseStorageOrder(args.GetSingleArgument<std::string>("order", "NCHW"))),
      global_pooling_(args.GetSingleArgument<int>("global_pooling", 0) != 0),
      group_(args.GetSingleArgument<int>("group", 1)) {
  const int lp = args.GetSingleArgument<int>("legacy_pad", 0);
  C2_ENFORCE(lp >= 0 && lp <= 3, "legacy_pad must be 0 (NOTSET), 1 (VALID), 2 (SAME) or 3 ",
             "(CAFFE_LEGACY_POOLING), got ", lp);
  legacy_pad_ = static_cast<LegacyPadding>(lp);

  kernel_ = Parse(args, "kernel", "kernel_h", "kernel_w", "kernels", 0);
  stride_ = Parse(args, "stride", "stride_h", "stride_w", "strides", 1);
  dilation_ = Parse(args, "dilation", "dilation_h", "dilation_w", "dilations", 1);
  adj_ = Parse(args, "adj", "adj_h", "adj_w", "adjs", 0);

  // Pads: `pad`, the four pad_t/pad_l/pad_b/pad_r, or `pads`.
  std::vector<PerDim> pad_forms;
  if (args.HasArgument("pads"))
    pad_forms.push_back({args.GetRepeatedArgument<int>("pads"), false, "'pads'"});
  if (args.HasArgument("pad"))
    pad_forms.push_back({{args.GetSingleArgument<int>("pad", 0)}, true, "'pad'"});
  const char* sides[] = {"pad_t", "pad_l", "pad_b", "pad_r"};
  int sides_given = 0;
  for (const char* s : sides) sides_given += args.HasArgument(s) ? 1 : 0;
  if (sides_given > 0) {
    C2_ENFORCE(sides_given == 4,
               "'pad_t', 'pad_l', 'pad_b' and 'pad_r' must be given together, got only ",
               sides_given, " of them");
    PerDim p{{}, false, "'pad_t'/'pad_l'/'pad_b'/'pad_r'"};
    for (const char* s : sides) p.values.push_back(args.GetSingleArgument<int>(s, 0));
    pad_forms.push_back(p);
  }
  pads_ = Merge(pad_forms, "'pad', 'pad_t'/'pad_l'/'pad_b'/'pad_r' or 'pads'", 0);
  pads_given_ = !pad_forms.empty();

  if (legacy_pad_ == LegacyPadding::VALID || legacy_pad_ == LegacyPadding::SAME) {
    C2_ENFORCE(!pads_given_, "legacy_pad ", LegacyPaddingName(legacy_pad_),
               " computes the pads itself; remove the explicit ", pads_.source);
  }
  for (int k : kernel_.values) {
    C2_ENFORCE(
        global_pooling_ || k > 0,
        kernel_.source.empty()
            ? std::string(
                  "the kernel size is not set: give 'kernel', 'kernel_h'/'kernel_w' or 'kernels'")
            : MakeString("kernel sizes must be positive, got ", kernel_.source, " = ",
                         JoinInts(kernel_.values)));
  }
  for (int s : stride_.values) {
    C2_ENFORCE(s > 0, "strides must be positive, got ", stride_.source, " = ",
               JoinInts(stride_.values));
  }
  for (int d : dilation_.values) {
    C2_ENFORCE(d > 0, "dilations must be positive, got ", dilation_.source, " = ",
               JoinInts(dilation_.values));
  }
  for (int a : adj_.values) {
    C2_ENFORCE(a >= 0, "adjs must be non-negative, got ", adj_.source, " = ",
               JoinInts(adj_.values));
  }
  for (int p : pads_.values) {
    C2_ENFORCE(p >= 0, "pads must be non-negative, got ", pads_.source, " = ",
               JoinInts(pads_.values));
  }
  const auto all_equal = [](const PerDim& p, int v) {
    return std::all_of(p.values.begin(), p.values.end(), [v](int x) { return x == v; });
  };
  if (global_pooling_) {
    C2_ENFORCE(all_equal(pads_, 0) && all_equal(stride_, 1) && all_equal(dilation_, 1),
               "global_pooling requires pads 0, strides 1 and dilations 1, got pads ",
               JoinInts(pads_.values), ", strides ", JoinInts(stride_.values), ", dilations ",
               JoinInts(dilation_.values));
  }
  if (legacy_pad_ == LegacyPadding::SAME) {
    C2_ENFORCE(all_equal(dilation_, 1), "legacy_pad SAME does not support dilation, got ",
               dilation_.source, " = ", JoinInts(dilation_.values));
  }
  C2_ENFORCE(group_ >= 1, "group must be at least 1, got ", group_);
  if (group_ > 1) {
    C2_ENFORCE(order_ == StorageOrder::NCHW, "group ", group_,
               " needs order NCHW; NHWC supports only group 1");
    C2_ENFORCE(all_equal(dilation_, 1), "group ", group_, " cannot be combined with dilation, got ",
               dilation_.source, " = ", JoinInts(dilation_.values));
  }
}

std::vector<int> ConvPoolArgs::Expand(const PerDim& p, int n, int per_dim, const char* what) {
  if (p.uniform) return std::vector<int>(static_cast<size_t>(n) * per_dim, p.values[0]);
  C2_ENFORCE(static_cast<int>(p.values.size()) == n * per_dim, p.source, " gives ", p.values.size(),
             " ", what, " but the input has ", n, " spatial dim", n == 1 ? "" : "s",
             per_dim == 2 ? " (pads hold heads then tails)" : "");
  return p.values;
}

ConvPoolGeometry ConvPoolArgs::ResolveCommon(const std::vector<int64_t>& x) const {
  const bool nchw = order_ == StorageOrder::NCHW;
  C2_ENFORCE(x.size() >= 3 && x.size() <= 5, "X ", Tensor::DimsString(x),
             " must have 3 to 5 dims: ", nchw ? "(N, C, spatial...)" : "(N, spatial..., C)",
             " with 1 to 3 spatial dims");
  const int n = static_cast<int>(x.size()) - 2;
  ConvPoolGeometry g;
  g.order = order_;
  g.N = x[0];
  g.C = nchw ? x[1] : x.back();
  g.in.assign(x.begin() + (nchw ? 2 : 1), x.begin() + (nchw ? 2 : 1) + n);
  if (global_pooling_) {
    g.kernel.assign(g.in.begin(), g.in.end());
  } else {
    g.kernel = Expand(kernel_, n, 1, "kernel sizes");
  }
  g.stride = Expand(stride_, n, 1, "strides");
  g.dilation = Expand(dilation_, n, 1, "dilations");
  std::vector<int> pads = Expand(pads_, n, 2, "pads");
  g.pad_head.assign(pads.begin(), pads.begin() + n);
  g.pad_tail.assign(pads.begin() + n, pads.end());
  g.out.resize(n);
  return g;
}

ConvPoolGeometry ConvPoolArgs::Resolve(const std::vector<int64_t>& x) const {
  ConvPoolGeometry g = ResolveCommon(x);
  for (int i = 0; i < g.spatial_dims(); ++i) {
    g.out[i] = ConvPoolOutputSize(g.in[i], g.kernel[i], g.stride[i], g.dilation[i], legacy_pad_,
                                  &g.pad_head[i], &g.pad_tail[i]);
    if (g.out[i] < 1) {
      const int64_t dk = static_cast<int64_t>(g.dilation[i]) * (g.kernel[i] - 1) + 1;
      const int64_t tail =
          legacy_pad_ == LegacyPadding::CAFFE_LEGACY_POOLING ? g.pad_head[i] : g.pad_tail[i];
      C2_THROW("kernel ", g.kernel[i],
               dk != g.kernel[i] ? MakeString(" (dilated ", dk, ")") : std::string(),
               " is larger than the padded input ", g.in[i] + g.pad_head[i] + tail, " (size ",
               g.in[i], " + pads ", g.pad_head[i], " + ", tail, ") in spatial dim ", i, " of X ",
               Tensor::DimsString(x));
    }
  }
  return g;
}

ConvPoolGeometry ConvPoolArgs::ResolveTranspose(const std::vector<int64_t>& x) const {
  C2_ENFORCE(legacy_pad_ != LegacyPadding::CAFFE_LEGACY_POOLING,
             "legacy_pad CAFFE_LEGACY_POOLING does not apply to a transposed convolution");
  ConvPoolGeometry g = ResolveCommon(x);
  g.adj = Expand(adj_, g.spatial_dims(), 1, "adjs");
  for (int i = 0; i < g.spatial_dims(); ++i) {
    C2_ENFORCE(g.adj[i] <= g.stride[i], "adj ", g.adj[i], " must not exceed the stride ",
               g.stride[i], " in spatial dim ", i);
    C2_ENFORCE(g.in[i] >= 1, "X ", Tensor::DimsString(x), " has an empty spatial dim ", i);
    if (legacy_pad_ != LegacyPadding::NOTSET) g.pad_head[i] = g.pad_tail[i] = 0;
    const int64_t dk = static_cast<int64_t>(g.dilation[i]) * (g.kernel[i] - 1) + 1;
    g.out[i] = (g.in[i] - 1) * g.stride[i] + dk + g.adj[i] - g.pad_head[i] - g.pad_tail[i];
    C2_ENFORCE(g.out[i] >= 1, "pads ", g.pad_head[i], " + ", g.pad_tail[i],
               " remove the whole output ", (g.in[i] - 1) * g.stride[i] + dk + g.adj[i],
               " of spatial dim ", i, " of X ", Tensor::DimsString(x));
  }
  return g;
}

ConvPoolGeometry ResolveConvPoolShape(const OperatorDef& def, const TensorShape& x) {
  std::vector<int64_t> dims(x.dims().begin(), x.dims().end());
  return ConvPoolArgs(ArgumentHelper(def)).Resolve(dims);
}

}  // namespace caffe2
