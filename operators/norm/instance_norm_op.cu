// CUDA kernels of InstanceNorm and InstanceNormGradient (contracts in instance_norm_op.cc), float
// only like the CPU ops. One block per (n, c) plane: the plane sums are accumulated in double and
// the per-element formulas are the CPU kernel's, in float. The gradient's per-channel dscale and
// dbias add the per-plane double sums over n (SumOver).
#include <string>

#include "core/cuda/cuda_context.h"
#include "core/operator.h"
#include "operators/common/block_reduce_cuda.cuh"
#include "operators/common/reduce_cuda.cuh"
#include "operators/norm/norm_op_checks.h"

namespace caffe2 {
namespace {

struct Planes {
  int64_t C, S;
  bool nchw;
  // Flat index of spatial element s of plane p = n * C + c.
  __device__ int64_t Index(int64_t p, int64_t s) const {
    return nchw ? p * S + s : ((p / C) * S + s) * C + p % C;
  }
};

// The plane's mean and 1 / sqrt(biased var + epsilon) (0 and 1 / sqrt(epsilon) for an empty plane).
// Every thread of the block calls it and gets the result.
__device__ void PlaneMoments(const Planes& l, int64_t p, const float* x, double epsilon,
                             float* mean, float* inv_std) {
  double sum = 0, sumsq = 0;
  for (int64_t s = threadIdx.x; s < l.S; s += blockDim.x) {
    const double v = x[l.Index(p, s)];
    sum += v;
    sumsq += v * v;
  }
  sum = BlockSum(sum);
  sumsq = BlockSum(sumsq);
  const double m = l.S > 0 ? sum / l.S : 0.0;
  const double var = l.S > 0 ? fmax(0.0, sumsq / l.S - m * m) : 0.0;
  *mean = static_cast<float>(m);
  *inv_std = static_cast<float>(1.0 / sqrt(var + epsilon));
}

// Y = X * a + b with a = inv_std * scale[c], b = bias[c] - mean * a. Y may be X: a block reads its
// whole plane before writing it.
__global__ void InstanceNormKernel(Planes l, int64_t planes, double epsilon, const float* x,
                                   const float* scale, const float* bias, float* mean,
                                   float* inv_std, float* y) {
  for (int64_t p = blockIdx.x; p < planes; p += gridDim.x) {
    float m, is;
    PlaneMoments(l, p, x, epsilon, &m, &is);
    if (threadIdx.x == 0) {
      mean[p] = m;
      inv_std[p] = is;
    }
    const int64_t c = p % l.C;
    const float a = __fmul_rn(is, scale[c]);
    const float b = bias[c] - __fmul_rn(m, a);
    for (int64_t s = threadIdx.x; s < l.S; s += blockDim.x) {
      const int64_t i = l.Index(p, s);
      y[i] = __fadd_rn(__fmul_rn(x[i], a), b);
    }
  }
}

// Per plane: sdy = sum dY, sdyx = sum dY * xhat (stored per plane for dbias and dscale), and
// dX = scale[c] * inv_std / S * (S * dY - sdy - xhat * sdyx). The statistics are read from
// mean/inv_std when given (non-null), else recomputed from X.
__global__ void InstanceNormGradientKernel(Planes l, int64_t planes, double epsilon, const float* x,
                                           const float* scale, const float* dy, const float* mean,
                                           const float* inv_std, double* plane_sdy,
                                           double* plane_sdyx, float* dx) {
  for (int64_t p = blockIdx.x; p < planes; p += gridDim.x) {
    float m, is;
    if (mean != nullptr) {
      m = mean[p];
      is = inv_std[p];
    } else {
      PlaneMoments(l, p, x, epsilon, &m, &is);
    }
    double sdy = 0, sdyx = 0;
    for (int64_t s = threadIdx.x; s < l.S; s += blockDim.x) {
      const int64_t i = l.Index(p, s);
      sdy += dy[i];
      sdyx += __fmul_rn(__fmul_rn(dy[i], x[i] - m), is);
    }
    sdy = BlockSum(sdy);
    sdyx = BlockSum(sdyx);
    if (threadIdx.x == 0) {
      plane_sdy[p] = sdy;
      plane_sdyx[p] = sdyx;
    }
    const float fs = static_cast<float>(l.S);
    const float k = __fdiv_rn(__fmul_rn(scale[p % l.C], is), fs);
    const float sdy_f = static_cast<float>(sdy), sdyx_f = static_cast<float>(sdyx);
    for (int64_t s = threadIdx.x; s < l.S; s += blockDim.x) {
      const int64_t i = l.Index(p, s);
      const float xhat = __fmul_rn(x[i] - m, is);
      dx[i] = __fmul_rn(k, __fmul_rn(fs, dy[i]) - sdy_f - __fmul_rn(xhat, sdyx_f));
    }
  }
}

struct ReadDouble {
  const double* v;
  __device__ double operator()(int64_t i, int64_t) const { return v[i]; }
};

Planes PlanesOf(const ChannelLayout& l) { return Planes{l.C, l.S, l.nchw}; }

class CudaInstanceNormOp final : public Operator<CUDAContext> {
 public:
  CudaInstanceNormOp(const OperatorDef& def, Workspace* ws)
      : Operator<CUDAContext>(def, ws),
        epsilon_(GetSingleArgument<float>("epsilon", 1e-5f)),
        order_(GetSingleArgument<std::string>("order", "NCHW")),
        mean_scratch_(device()),
        inv_std_scratch_(device()) {
    ParseOrderIsNCHW(order_);
    CheckNormEpsilon(epsilon_);
  }

  bool RunOnDevice() override {
    const Tensor& X = Input(0);
    const ChannelLayout l = CheckInstanceNormInputs(*this, X, order_);
    const float* x = X.data<float>();
    const float* scale = Input(1).data<float>();
    const float* bias = Input(2).data<float>();
    Tensor* mean = OutputSize() > 1 ? Output(1) : &mean_scratch_;
    Tensor* inv_std = OutputSize() > 2 ? Output(2) : &inv_std_scratch_;
    mean->Resize(l.N, l.C);
    inv_std->Resize(l.N, l.C);
    float* mu = mean->mutable_data<float>();
    float* is = inv_std->mutable_data<float>();
    Tensor* Y = Output(0);
    Y->ResizeLike(X);
    float* y = Y->mutable_data<float>();
    const int64_t planes = l.N * l.C;
    if (planes == 0) return true;
    InstanceNormKernel<<<CudaRowBlocks(planes), kCudaThreadsPerBlock, 0, context_.stream()>>>(
        PlanesOf(l), planes, static_cast<double>(epsilon_), x, scale, bias, mu, is, y);
    C2_CUDA_KERNEL_LAUNCH_CHECK();
    return true;
  }

 private:
  float epsilon_;
  std::string order_;
  Tensor mean_scratch_;  // the statistics when the outputs are not asked for
  Tensor inv_std_scratch_;
};

class CudaInstanceNormGradientOp final : public Operator<CUDAContext> {
 public:
  CudaInstanceNormGradientOp(const OperatorDef& def, Workspace* ws)
      : Operator<CUDAContext>(def, ws),
        epsilon_(GetSingleArgument<float>("epsilon", 1e-5f)),
        order_(GetSingleArgument<std::string>("order", "NCHW")),
        plane_sdy_(device()),
        plane_sdyx_(device()) {
    ParseOrderIsNCHW(order_);
    CheckNormEpsilon(epsilon_);
  }

  bool RunOnDevice() override {
    const Tensor& X = Input(0);
    const ChannelLayout l = CheckInstanceNormGradientInputs(*this, order_);
    const bool have_stats = InputSize() == 6;
    const float* x = X.data<float>();
    const float* scale = Input(1).data<float>();
    const float* dy = Input(3).data<float>();
    const float* mean = have_stats ? Input(4).data<float>() : nullptr;
    const float* inv_std = have_stats ? Input(5).data<float>() : nullptr;
    const int64_t planes = l.N * l.C;
    plane_sdy_.Resize(planes);
    plane_sdyx_.Resize(planes);
    double* sdy = plane_sdy_.mutable_data<double>();
    double* sdyx = plane_sdyx_.mutable_data<double>();
    Tensor* dX = Output(0);
    Tensor* dscale = Output(1);
    Tensor* dbias = Output(2);
    dX->ResizeLike(X);
    dscale->Resize(l.C);
    dbias->Resize(l.C);
    float* dx = dX->mutable_data<float>();
    float* ds = dscale->mutable_data<float>();
    float* db = dbias->mutable_data<float>();
    if (planes > 0) {
      InstanceNormGradientKernel<<<CudaRowBlocks(planes), kCudaThreadsPerBlock, 0,
                                   context_.stream()>>>(PlanesOf(l), planes,
                                                        static_cast<double>(epsilon_), x, scale, dy,
                                                        mean, inv_std, sdy, sdyx, dx);
      C2_CUDA_KERNEL_LAUNCH_CHECK();
    }
    // dscale[c] = sum over n of sdyx[n, c], dbias[c] likewise: the (N, C, 1) view (zeros for N =
    // 0).
    SumOver<double>(l.N, l.C, 1, ReadDouble{sdyx}, 1.0, ds, context_.stream());
    SumOver<double>(l.N, l.C, 1, ReadDouble{sdy}, 1.0, db, context_.stream());
    return true;
  }

 private:
  float epsilon_;
  std::string order_;
  Tensor plane_sdy_;  // per-plane sums, in double like the CPU kernel's accumulators
  Tensor plane_sdyx_;
};

}  // namespace

REGISTER_CUDA_OPERATOR(InstanceNorm, CudaInstanceNormOp);
REGISTER_CUDA_OPERATOR(InstanceNormGradient, CudaInstanceNormGradientOp);

}  // namespace caffe2
