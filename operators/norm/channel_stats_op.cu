// CUDA kernel of ChannelStats (contract in channel_stats_op.cc): per-channel sums of X and X^2
// over N and the spatial dims, accumulated in double like the CPU kernel (channel_stats_cuda.cuh).
#include <string>

#include "operators/norm/channel_stats_cuda.cuh"

namespace caffe2 {
namespace {

struct ReadSquare {
  const float* x;
  __device__ double operator()(int64_t i, int64_t) const {
    const double v = x[i];
    return v * v;
  }
};

class CudaChannelStatsOp final : public Operator<CUDAContext> {
 public:
  CudaChannelStatsOp(const OperatorDef& def, Workspace* ws)
      : Operator<CUDAContext>(def, ws), order_(GetSingleArgument<std::string>("order", "NCHW")) {
    ParseOrderIsNCHW(order_);
  }
  bool RunOnDevice() override {
    const Tensor& X = Input(0);
    const ChannelLayout l = GetChannelLayout(X, order_);
    int64_t pre, post;
    ChannelView(l, &pre, &post);
    Tensor* S = Output(0);
    Tensor* Q = Output(1);
    S->Resize(l.C);
    Q->Resize(l.C);
    const float* x = X.data<float>();
    SumOver<double>(pre, l.C, post, ReadValue{x}, 1.0, S->mutable_data<float>(), context_.stream());
    SumOver<double>(pre, l.C, post, ReadSquare{x}, 1.0, Q->mutable_data<float>(),
                    context_.stream());
    return true;
  }

 private:
  std::string order_;
};

}  // namespace

REGISTER_CUDA_OPERATOR(ChannelStats, CudaChannelStatsOp);

}  // namespace caffe2
