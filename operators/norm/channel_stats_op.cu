// CUDA kernels of ChannelStats and ChannelBackpropStats (contracts in channel_stats_op.cc and
// channel_backprop_stats_op.cc): per-channel sums over N and the spatial dims, accumulated in
// double like the CPU kernels. NCHW is the (N, C, S) view, NHWC the (N * S, C, 1) view.
#include <string>

#include "core/cuda/cuda_context.h"
#include "core/operator.h"
#include "operators/common/reduce_cuda.cuh"
#include "operators/norm/spatial_bn_op.h"

namespace caffe2 {
namespace {

struct ReadValue {
  const float* x;
  __device__ double operator()(int64_t i, int64_t) const { return x[i]; }
};
struct ReadSquare {
  const float* x;
  __device__ double operator()(int64_t i, int64_t) const {
    const double v = x[i];
    return v * v;
  }
};
struct ReadNormalizedTimesGradient {  // (x - mean[c]) * inv_std[c] * dy
  const float* x;
  const float* dy;
  const float* mean;
  const float* inv_std;
  __device__ double operator()(int64_t i, int64_t c) const {
    return (static_cast<double>(x[i]) - mean[c]) * inv_std[c] * dy[i];
  }
};

// The (pre, C, post) view of a channel layout.
void View(const ChannelLayout& l, int64_t* pre, int64_t* post) {
  *pre = l.nchw ? l.N : l.N * l.S;
  *post = l.nchw ? l.S : 1;
}

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
    View(l, &pre, &post);
    Tensor* S = Output(0);
    Tensor* Q = Output(1);
    S->Resize(l.C);
    Q->Resize(l.C);
    const float* x = X.data<float>();
    SumOver<double>(pre, l.C, post, ReadValue{x}, 1.0, S->mutable_data<float>(),
                    context_.stream());
    SumOver<double>(pre, l.C, post, ReadSquare{x}, 1.0, Q->mutable_data<float>(),
                    context_.stream());
    return true;
  }

 private:
  std::string order_;
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
    const ChannelLayout l = GetChannelLayout(X, order_);
    C2_ENFORCE(dY.dims() == X.dims() && dY.IsType<float>(), "dY ", Tensor::DimsString(dY.dims()),
               " must be float and shaped like X ", Tensor::DimsString(X.dims()));
    const char* names[] = {"", "saved_mean", "saved_inv_std"};
    for (int i = 1; i <= 2; ++i) {
      C2_ENFORCE(Input(i).IsType<float>() && Input(i).numel() == l.C, names[i], " ",
                 Tensor::DimsString(Input(i).dims()), " must hold ", l.C,
                 " floats (one per channel)");
    }
    int64_t pre, post;
    View(l, &pre, &post);
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

REGISTER_CUDA_OPERATOR(ChannelStats, CudaChannelStatsOp);
REGISTER_CUDA_OPERATOR(ChannelBackpropStats, CudaChannelBackpropStatsOp);

}  // namespace caffe2
