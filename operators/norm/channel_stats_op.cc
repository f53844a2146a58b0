// ChannelStats: [X] -> [sum (C), sumsq (C)] (spec ops §1.2.16): per-channel sum and sum of squares
// over N and the spatial dims, the inputs SpatialBN takes when num_batches > 1. X has rank 3 to 5;
// arg `order` (NCHW default, or NHWC). No gradient.
#include <vector>

#include "core/gradient.h"
#include "core/operator.h"
#include "operators/norm/spatial_bn_op.h"

namespace caffe2 {
namespace {

class ChannelStatsOp final : public Operator<CPUContext> {
 public:
  ChannelStatsOp(const OperatorDef& def, Workspace* ws)
      : Operator<CPUContext>(def, ws), order_(GetSingleArgument<std::string>("order", "NCHW")) {
    ParseOrderIsNCHW(order_);
  }

  bool RunOnDevice() override {
    const ChannelLayout l = GetChannelLayout(Input(0), order_);
    std::vector<double> sum(l.C), sumsq(l.C);
    ChannelSums(Input(0).data<float>(), l, sum.data(), sumsq.data());
    Tensor* S = Output(0);
    Tensor* Q = Output(1);
    S->Resize(l.C);
    Q->Resize(l.C);
    float* s = S->mutable_data<float>();
    float* q = Q->mutable_data<float>();
    for (int64_t c = 0; c < l.C; ++c) {
      s[c] = static_cast<float>(sum[c]);
      q[c] = static_cast<float>(sumsq[c]);
    }
    return true;
  }

 private:
  std::string order_;
};

}  // namespace

REGISTER_CPU_OPERATOR(ChannelStats, ChannelStatsOp);
OPERATOR_SCHEMA(ChannelStats)
    .NumInputs(1)
    .NumOutputs(2)
    .TensorInference([](const OperatorDef& def, const std::vector<TensorShape>& in) {
      const bool nchw =
          ArgumentHelper(def).GetSingleArgument<std::string>("order", "NCHW") != "NHWC";
      TensorShape c;
      c.set_data_type(TensorProto::FLOAT);
      c.add_dims(in.at(0).dims(nchw ? 1 : in[0].dims_size() - 1));
      return std::vector<TensorShape>{c, c};
    })
    .Arg("order", "NCHW (default) or NHWC")
    .SetDoc("Per-channel sum and sum of squares over the batch and spatial dims.")
    .Input(0, "X", "Input (N, C, spatial...)")
    .Output(0, "sum", "Per-channel sums (C)")
    .Output(1, "sumsq", "Per-channel sums of squares (C)");
REGISTER_GRADIENT(ChannelStats, ShouldNotDoGradient);

}  // namespace caffe2
