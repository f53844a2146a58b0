// CUDA kernel of ChannelBackpropStats (contract in channel_backprop_stats_op.cc): dbias = sum(dY),
// dscale = sum((X - mean) * inv_std * dY) per channel, accumulated in double like the CPU kernel
// (channel_stats_cuda.cuh). The input checks are the CPU op's (norm_op_checks.h).
#include <string>

#include "operators/norm/channel_stats_cuda.cuh"
#include "operators/norm/norm_op_checks.h"

namespace caffe2 {
namespace {

struct ReadNormalizedTimesGradient {  // (x - mean[c]) * inv_std[c] * dy
  const float* x;
  const float* dy;
  const float* mean;
  const float* inv_std;
  __device__ double operator()(int64_t i, int64_t c) const {
    return (static_cast<double>(x[i]) - mean[c]) * inv_std[c] * dy[i];
  }
};

class CudaChannelBackpropStatsOp final : public Operator<CUDAContext> {
 public:
  CudaChannelBackpropStatsOp(const OperatorDef& def, Workspace* ws)
      : Operator<CUDAContext>(def, ws), order_(GetSingleArgument<std::string>("order", "NCHW")) {
    ParseOrderIsNCHW(order_);
  }
  bool RunOnDevice() override {
    const Tensor& X = Input(0);
    const Tensor& dY = Input(3);
    const ChannelLayout l = CheckChannelBackpropStatsInputs(*this, order_);
    int64_t pre, post;
    ChannelView(l, &pre, &post);
    Tensor* dS = Output(0);
    Tensor* dB = Output(1);
    dS->Resize(l.C);
    dB->Resize(l.C);
    SumOver<double>(pre, l.C, post,
                    ReadNormalizedTimesGradient{X.data<float>(), dY.data<float>(),
                                                Input(1).data<float>(), Input(2).data<float>()},
                    1.0, dS->mutable_data<float>(), context_.stream());
    SumOver<double>(pre, l.C, post, ReadValue{dY.data<float>()}, 1.0, dB->mutable_data<float>(),
                    context_.stream());
    return true;
  }

 private:
  std::string order_;
};

}  // namespace

REGISTER_CUDA_OPERATOR(ChannelBackpropStats, CudaChannelBackpropStatsOp);

}  // namespace caffe2
