// The ends of a blocked-layout chain (dnnl_blocked_tensor.h):
// DnnlToBlocked: [X (N, C, H, W) float] -> [Y DnnlBlockedTensor], X in nChw16c when C is a
//   multiple of 16 (the layout oneDNN's AVX-512 convolutions read), else as it is (NCHW).
// DnnlToPlain: [X DnnlBlockedTensor] -> [Y (N, C, H, W) float], the values in NCHW.
// CPU (oneDNN builds only); no gradients (inference nets).
#include "core/gradient.h"
#include "core/operator.h"
#include "operators/common/dnnl_context.h"
#include "operators/dnnl/dnnl_blocked_tensor.h"

namespace caffe2 {
namespace {

using dnnl::memory;

memory::desc PlainDesc(const std::vector<int64_t>& dims) {
  return memory::desc(memory::dims(dims.begin(), dims.end()), memory::data_type::f32,
                      memory::format_tag::nchw);
}

void Reorder(const memory& from, const memory& to) {
  dnnl::reorder(from, to).execute(DnnlStream(), const_cast<memory&>(from), const_cast<memory&>(to));
  DnnlStream().wait();
}

class DnnlToBlockedOp final : public Operator<CPUContext> {
 public:
  using Operator<CPUContext>::Operator;
  bool RunOnDevice() override {
    const Tensor& X = Input(0);
    C2_ENFORCE(X.IsType<float>() && X.ndim() == 4,
               "X must be a 4-d (N, C, H, W) float tensor, got ", X.DebugString());
    const memory::desc plain = PlainDesc(X.dims());
    const auto tag = X.dim(1) % 16 == 0 ? memory::format_tag::nChw16c : memory::format_tag::nchw;
    auto* Y = OutputObject<DnnlBlockedTensor>(0);
    Y->Reset(memory::desc(plain.dims(), memory::data_type::f32, tag));
    if (X.numel() == 0) return true;
    Reorder(memory(plain, DnnlEngine(), const_cast<float*>(X.data<float>())), Y->Memory());
    return true;
  }
};

class DnnlToPlainOp final : public Operator<CPUContext> {
 public:
  using Operator<CPUContext>::Operator;
  bool RunOnDevice() override {
    C2_ENFORCE(InputBlob(0).IsType<DnnlBlockedTensor>(), "the blob '", debug_def().input(0),
               "' holds no oneDNN blocked tensor");
    const DnnlBlockedTensor& X = InputObject<DnnlBlockedTensor>(0);
    Tensor* Y = Output(0);
    Y->Resize(X.dims);
    float* y = Y->mutable_data<float>();
    if (Y->numel() == 0) return true;
    Reorder(X.Memory(), memory(PlainDesc(X.dims), DnnlEngine(), y));
    return true;
  }
};

}  // namespace

REGISTER_CPU_OPERATOR(DnnlToBlocked, DnnlToBlockedOp);
OPERATOR_SCHEMA(DnnlToBlocked)
    .NumInputs(1)
    .NumOutputs(1)
    .Input(0, "X", "(N, C, H, W) float")
    .Output(0, "Y", "X in oneDNN's blocked layout (not a Tensor)")
    .SetDoc("Starts a oneDNN blocked-layout chain (inference).");
REGISTER_GRADIENT(DnnlToBlocked, NoGradient);

REGISTER_CPU_OPERATOR(DnnlToPlain, DnnlToPlainOp);
OPERATOR_SCHEMA(DnnlToPlain)
    .NumInputs(1)
    .NumOutputs(1)
    .Input(0, "X", "a oneDNN blocked tensor")
    .Output(0, "Y", "(N, C, H, W) float")
    .SetDoc("Ends a oneDNN blocked-layout chain (inference).");
REGISTER_GRADIENT(DnnlToPlain, NoGradient);

}  // namespace caffe2
