// ChannelBackpropStats: [X, saved_mean (C), saved_inv_std (C), dY] -> [dscale (C), dbias (C)]
// (spec ops §1.2.16): dbias = sum(dY), dscale = sum((X - mean) * inv_std * dY) per channel over N
// and the spatial dims; the per-device partial sums that SpatialBNGradient aggregates with
// num_batches > 1. Arg `order` (NCHW default, or NHWC). No gradient.
#include "core/gradient.h"
#include "core/operator.h"
#include "operators/norm/norm_op_checks.h"
#include "operators/norm/spatial_bn_op.h"

namespace caffe2 {
namespace {

class ChannelBackpropStatsOp final : public Operator<CPUContext> {
 public:
  ChannelBackpropStatsOp(const OperatorDef& def, Workspace* ws)
      : Operator<CPUContext>(def, ws), order_(GetSingleArgument<std::string>("order", "NCHW")) {
    ParseOrderIsNCHW(order_);
  }

  bool RunOnDevice() override {
    const Tensor& X = Input(0);
    const Tensor& dY = Input(3);
    const ChannelLayout l = CheckChannelBackpropStatsInputs(*this, order_);
    Tensor* dS = Output(0);
    Tensor* dB = Output(1);
    dS->Resize(l.C);
    dB->Resize(l.C);
    ChannelBackpropSums(X.data<float>(), dY.data<float>(), Input(1).data<float>(),
                        Input(2).data<float>(), l, dS->mutable_data<float>(),
                        dB->mutable_data<float>());
    return true;
  }

 private:
  std::string order_;
};

}  // namespace

REGISTER_CPU_OPERATOR(ChannelBackpropStats, ChannelBackpropStatsOp);
OPERATOR_SCHEMA(ChannelBackpropStats)
    .NumInputs(4)
    .NumOutputs(2)
    .TensorInference([](const OperatorDef&, const std::vector<TensorShape>& in) {
      TensorShape c = in.at(1);
      c.set_data_type(TensorProto::FLOAT);
      return std::vector<TensorShape>{c, c};
    })
    .Arg("order", "NCHW (default) or NHWC")
    .SetDoc("Per-channel scale and bias gradients of batch normalization.")
    .Input(0, "X", "Input (N, C, spatial...)")
    .Input(1, "saved_mean", "Batch mean (C)")
    .Input(2, "saved_inv_std", "Batch 1/sqrt(var + epsilon) (C)")
    .Input(3, "dY", "Output gradient, shaped like X")
    .Output(0, "scale_grad", "dscale (C)")
    .Output(1, "bias_grad", "dbias (C)");
REGISTER_GRADIENT(ChannelBackpropStats, ShouldNotDoGradient);

}  // namespace caffe2
