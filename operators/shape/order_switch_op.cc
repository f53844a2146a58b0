// NHWC2NCHW: 4-D [X (N, H, W, C)] -> [Y (N, C, H, W)]; NCHW2NHWC the reverse (spec ops §1.2.11).
// Any element type. Gradients: each other's op on dY.
#include "core/gradient.h"
#include "operators/tensor/tensor_util.h"
#include "operators/shape/order_switch_op.h"
#include "operators/shape/transpose_op.h"

namespace caffe2 {
namespace {

template <bool kToNCHW>
class OrderSwitchOp final : public Operator<CPUContext> {
 public:
  using Operator<CPUContext>::Operator;
  bool RunOnDevice() override {
    const Tensor& X = Input(0);
    CheckOrderSwitchInput(X);
    const std::vector<int64_t>& d = X.dims();
    Tensor* Y = Output(0);
    Y->Resize(kToNCHW ? std::vector<int64_t>{d[0], d[3], d[1], d[2]}
                      : std::vector<int64_t>{d[0], d[2], d[3], d[1]});
    const std::vector<int> perm =
        kToNCHW ? std::vector<int>{0, 3, 1, 2} : std::vector<int>{0, 2, 3, 1};
    TransposeData(X.meta(), d, perm, X.raw_data(), Y->raw_mutable_data(X.meta()));
    return true;
  }
};

template <bool kToNCHW>
std::vector<TensorShape> OrderSwitchInference(const OperatorDef&,
                                              const std::vector<TensorShape>& in) {
  TensorShape out = in[0];
  if (in[0].dims_size() != 4) {
    out.set_unknown_shape(true);
    return {out};
  }
  const auto& d = in[0].dims();
  const std::vector<int64_t> dims = kToNCHW ? std::vector<int64_t>{d[0], d[3], d[1], d[2]}
                                            : std::vector<int64_t>{d[0], d[2], d[3], d[1]};
  for (int i = 0; i < 4; ++i) out.set_dims(i, dims[i]);
  return {out};
}

template <bool kToNCHW>
class GetOrderSwitchGradient final : public GradientMakerBase {
  using GradientMakerBase::GradientMakerBase;
  std::vector<OperatorDef> GetGradientDefs() override {
    return SingleGradientDef(kToNCHW ? "NCHW2NHWC" : "NHWC2NCHW", "", {GO(0)}, {GI(0)});
  }
};

}  // namespace

REGISTER_CPU_OPERATOR(NHWC2NCHW, OrderSwitchOp<true>);
OPERATOR_SCHEMA(NHWC2NCHW)
    .NumInputs(1)
    .NumOutputs(1)
    .TensorInference(OrderSwitchInference<true>)
    .SetDoc("Converts a 4-D tensor from NHWC to NCHW.");
REGISTER_GRADIENT(NHWC2NCHW, GetOrderSwitchGradient<true>);

REGISTER_CPU_OPERATOR(NCHW2NHWC, OrderSwitchOp<false>);
OPERATOR_SCHEMA(NCHW2NHWC)
    .NumInputs(1)
    .NumOutputs(1)
    .TensorInference(OrderSwitchInference<false>)
    .SetDoc("Converts a 4-D tensor from NCHW to NHWC.");
REGISTER_GRADIENT(NCHW2NHWC, GetOrderSwitchGradient<false>);

}  // namespace caffe2
