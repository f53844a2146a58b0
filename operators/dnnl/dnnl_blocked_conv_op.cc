// DnnlBlockedConv: a convolution inside a oneDNN blocked-layout chain (dnnl_blocked_tensor.h), for
// inference nets the KeepDnnlBlockedLayout transform writes:
//   [X (blocked), filter (plain Tensor, as Conv's), bias (optional, plain), S (with summand = 1:
//   a blocked tensor of Y's shape)] -> [Y (blocked, the layout oneDNN picks)]
//   Y = conv(X, filter) + bias (+ S) (then max(0, .) with relu = 1): the residual addition and the
//   relu are post-ops of the oneDNN convolution, so the block's Sum and Relu cost no pass of their
//   own.
// Conv's window arguments (kernel, stride, pad, dilation, group; NCHW). The primitive is made on
// the first run and again when X's layout or the filter's dims change; the filter is reordered into
// the primitive's layout on every run (it may have been fed anew). CPU (oneDNN builds only); no
// gradient.
#include "core/gradient.h"
#include "core/operator.h"
#include "operators/common/dnnl_context.h"
#include "operators/conv/conv_dnnl_descs.h"
#include "operators/conv/conv_op.h"
#include "operators/conv/conv_pool_schema.h"
#include "operators/dnnl/dnnl_blocked_tensor.h"

namespace caffe2 {
namespace {

using dnnl::memory;

memory::desc AnyLayout(const memory::desc& d) {
  return memory::desc(d.dims(), memory::data_type::f32, memory::format_tag::any);
}

class DnnlBlockedConvOp final : public Operator<CPUContext> {
 public:
  DnnlBlockedConvOp(const OperatorDef& def, Workspace* ws)
      : Operator<CPUContext>(def, ws),
        args_(ArgumentHelper(def)),
        relu_(GetSingleArgument<bool>("relu", false)),
        summand_(GetSingleArgument<bool>("summand", false)),
        has_bias_(InputSize() - 2 - (summand_ ? 1 : 0) == 1) {
    C2_ENFORCE(InputSize() - 2 - (summand_ ? 1 : 0) <= 1,
               "DnnlBlockedConv takes [X, filter, bias?, S?]; got ", InputSize(), " inputs");
    C2_ENFORCE(args_.order() == StorageOrder::NCHW, "DnnlBlockedConv runs NCHW only");
  }

  bool RunOnDevice() override {
    const DnnlBlockedTensor& X = Blocked(0, "X");
    const Tensor& W = Input(1);
    C2_ENFORCE(W.IsType<float>(), "the filter must be float, got ", W.DebugString());
    const ConvShape s = CheckConvShapes(args_, X.dims, W.dims());
    const Tensor* bias = has_bias_ ? &Input(2) : nullptr;
    if (bias != nullptr) {
      C2_ENFORCE(bias->IsType<float>() && bias->numel() == s.M, "bias must hold ", s.M,
                 " floats, got ", bias->DebugString());
    }
    const ConvDescs d = Describe(s.g, s.M, s.group, bias != nullptr);
    if (!(plan_x_ == X.desc) || plan_w_ != W.dims()) Plan(d, X.desc, W.dims());

    auto* Y = OutputObject<DnnlBlockedTensor>(0);
    C2_ENFORCE(Y != &X, "DnnlBlockedConv cannot write its input X");
    if (summand_) {
      const DnnlBlockedTensor& S = Blocked(InputSize() - 1, "S");
      const memory::dims y_dims = pd_.dst_desc().dims();
      C2_ENFORCE(S.dims == std::vector<int64_t>(y_dims.begin(), y_dims.end()), "the summand ",
                 Tensor::DimsString(S.dims), " must have Y's shape");
      if (&S != Y) {  // oneDNN's sum post-op adds into what Y holds: start from S
        Y->Reset(pd_.dst_desc());
        memory from = S.Memory(), to = Y->Memory();
        dnnl::reorder(from, to).execute(DnnlStream(), from, to);
      } else {
        C2_ENFORCE(
            S.desc == pd_.dst_desc(),
            "in place, the summand must already have the layout of the convolution's output");
      }
    } else {
      Y->Reset(pd_.dst_desc());
    }
    memory weights(d.wei, DnnlEngine(), const_cast<float*>(W.data<float>()));
    if (!(pd_.weights_desc() == d.wei)) {
      if (!wei_buf_.data) wei_buf_.Reset(pd_.weights_desc());
      memory target = wei_buf_.Memory();
      dnnl::reorder(weights, target).execute(DnnlStream(), weights, target);
      weights = target;
    }
    std::unordered_map<int, memory> args{
        {DNNL_ARG_SRC, X.Memory()}, {DNNL_ARG_WEIGHTS, weights}, {DNNL_ARG_DST, Y->Memory()}};
    if (bias != nullptr) {
      args[DNNL_ARG_BIAS] = memory(d.bias, DnnlEngine(), const_cast<float*>(bias->data<float>()));
    }
    prim_.execute(DnnlStream(), args);
    DnnlStream().wait();
    return true;
  }

 private:
  const DnnlBlockedTensor& Blocked(int i, const char* name) const {
    C2_ENFORCE(InputBlob(i).IsType<DnnlBlockedTensor>(), name, " ('", debug_def().input(i),
               "') must be a oneDNN blocked tensor (made by DnnlToBlocked or DnnlBlockedConv)");
    return InputObject<DnnlBlockedTensor>(i);
  }

  void Plan(const ConvDescs& d, const memory::desc& x, const std::vector<int64_t>& w) {
    using Conv = dnnl::convolution_forward;
    const auto prop = dnnl::prop_kind::forward_inference;
    const auto alg = dnnl::algorithm::convolution_direct;
    const Conv::desc desc =
        d.has_bias ? Conv::desc(prop, alg, x, AnyLayout(d.wei), d.bias, AnyLayout(d.dst), d.strides,
                                d.dilates, d.pad_l, d.pad_r)
                   : Conv::desc(prop, alg, x, AnyLayout(d.wei), AnyLayout(d.dst), d.strides,
                                d.dilates, d.pad_l, d.pad_r);
    dnnl::post_ops ops;
    if (summand_) ops.append_sum(1.f);
    if (relu_) ops.append_eltwise(1.f, dnnl::algorithm::eltwise_relu, 0.f, 0.f);
    dnnl::primitive_attr attr;
    attr.set_post_ops(ops);
    pd_ = Conv::primitive_desc(desc, attr, DnnlEngine());
    prim_ = Conv(pd_);
    plan_x_ = x;
    plan_w_ = w;
    wei_buf_ = DnnlBlockedTensor();
  }

  ConvPoolArgs args_;
  bool relu_, summand_, has_bias_;
  memory::desc plan_x_;
  std::vector<int64_t> plan_w_;
  dnnl::convolution_forward::primitive_desc pd_;
  dnnl::convolution_forward prim_;
  DnnlBlockedTensor wei_buf_;
};

}  // namespace

REGISTER_CPU_OPERATOR(DnnlBlockedConv, DnnlBlockedConvOp);
OPERATOR_SCHEMA(DnnlBlockedConv)
    .NumInputs(2, 4)
    .NumOutputs(1)
    .Arg("relu", "1: Y = max(0, conv + ...) (default 0)")
    .Arg("summand", "1: the last input S is added to the convolution (default 0)")
    .Input(0, "X", "a oneDNN blocked tensor (N, C, H, W)")
    .Input(1, "filter", "(M, C / group, kh, kw) float")
    .Input(2, "bias", "optional (M) float")
    .Output(0, "Y", "a oneDNN blocked tensor (N, M, H', W')")
    .Arg("group", "(int, default 1) channel groups, as Conv's; no dilation")
    .SetDoc(
        "A convolution (with optional residual sum and relu) on oneDNN blocked tensors; Conv's "
        "window arguments, order NCHW only.");
static OpSchema& c2_dnnl_blocked_conv_args [[maybe_unused]] =
    AddConvPoolArgs(c2_op_schema_DnnlBlockedConv);
REGISTER_GRADIENT(DnnlBlockedConv, ShouldNotDoGradient);

}  // namespace caffe2
