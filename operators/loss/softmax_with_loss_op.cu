// CUDA SoftmaxWithLoss and SoftmaxWithLossGradient (float; the contract, arguments and checks are
// the CPU kernels', softmax_with_loss_op.cc / .h). The math mirrors the CPU kernel: the softmax
// is stored in float and the cross-entropy takes log(max(p, 1e-20)) of that stored value; the sum
// over rows, the weight total and the loss are accumulated in double; loss and dLoss stay on the
// GPU.
//
// Label values: labels fed on the host are checked there and raise exactly as on the CPU. Labels
// on the GPU cannot be checked without a device-to-host copy and a stream sync per step, so the
// kernels poison instead: a class id outside [0, D), or with label_prob=1 a row whose sum is not
// within 1e-5 of 1, makes the loss NaN (even when the weights sum to 0) and that row of dX NaN.
//
// Inputs living on the host or on another GPU (labels, weights, dLoss) are copied to the op's GPU.
#include <array>
#include <cmath>

#include "core/cuda/cuda_context.h"
#include "core/cuda/cuda_launch.h"
#include "core/operator.h"
#include "operators/common/block_reduce_cuda.cuh"
#include "operators/common/cuda_inputs.h"
#include "operators/loss/softmax_with_loss_op.h"

namespace caffe2 {
namespace {

constexpr float kLogThreshold = 1e-20f;  // as the CPU kernel

// Whether row i's target is valid: a class id in [0, D), or probabilities summing to 1 (+-1e-5).
// Every thread of the block must call it (the probability sum is a block reduction).
__device__ bool ValidTarget(int64_t i, int64_t D, const int* label, const float* prob) {
  if (prob == nullptr) return label[i] >= 0 && label[i] < D;
  double sum = 0;
  for (int64_t j = threadIdx.x; j < D; j += blockDim.x) sum += prob[i * D + j];
  sum = BlockSum(sum);
  return fabs(sum - 1.0) < 1e-5;
}

// One block per row: p = softmax(x_i); row_loss[i] = w_i * CE_i (NaN for an invalid target, which
// also sets *bad). `label` (int ids) or `prob` (label_prob=1) is null.
__global__ void SoftmaxLossRowsKernel(int64_t N, int64_t D, const float* x, const int* label,
                                      const float* prob, const float* w, float* p, double* row_loss,
                                      int* bad) {
  for (int64_t i = blockIdx.x; i < N; i += gridDim.x) {
    const float* xi = x + i * D;
    float* pi = p + i * D;
    float m = -INFINITY;
    for (int64_t j = threadIdx.x; j < D; j += blockDim.x) m = fmaxf(m, xi[j]);
    m = BlockMax(m);
    float sum = 0;
    for (int64_t j = threadIdx.x; j < D; j += blockDim.x) sum += (pi[j] = expf(xi[j] - m));
    sum = BlockSum(sum);
    double ce = 0;
    for (int64_t j = threadIdx.x; j < D; j += blockDim.x) {
      const float pj = pi[j] / sum;  // pi[j] was written by this thread above
      pi[j] = pj;
      if (prob) ce -= prob[i * D + j] * logf(fmaxf(pj, kLogThreshold));
    }
    if (prob) ce = BlockSum(ce);
    const bool valid = ValidTarget(i, D, label, prob);
    __syncthreads();  // p_i is complete before thread 0 reads p_i[label]
    if (threadIdx.x == 0) {
      if (!prob && valid) ce = -logf(fmaxf(pi[label[i]], kLogThreshold));
      if (!valid) *bad = 1;
      row_loss[i] = valid ? (w ? w[i] : 1.0f) * ce : NAN;
    }
  }
}

// One block: loss = scale * sum(row_loss) / sum(w) (0 when the weights sum to 0; NaN when *bad).
__global__ void SoftmaxLossFinishKernel(int64_t N, const double* row_loss, const float* w,
                                        const int* bad, float scale, float* loss) {
  double l = 0, t = 0;
  for (int64_t i = threadIdx.x; i < N; i += blockDim.x) {
    l += row_loss[i];
    t += w ? w[i] : 1.0f;
  }
  l = BlockSum(l);
  t = BlockSum(t);
  if (threadIdx.x == 0) {
    const float total = static_cast<float>(t);
    *loss = *bad ? NAN : total != 0 ? static_cast<float>(scale * l / total) : 0.0f;
  }
}

// One block: *g = scale * dLoss / sum(w) in float, as the CPU kernel (0 when the weights sum to 0).
__global__ void SoftmaxLossGradScaleKernel(int64_t N, const float* w, float scale,
                                           const float* dloss, float* g) {
  double t = 0;
  for (int64_t i = threadIdx.x; i < N; i += blockDim.x) t += w ? w[i] : 1.0f;
  t = BlockSum(t);
  if (threadIdx.x == 0) {
    const float total = static_cast<float>(t);
    *g = total != 0 ? scale * dloss[0] / total : 0.0f;
  }
}

// One block per row: dX_i = (p_i - target_i) * w_i * g (NaN for an invalid target).
__global__ void SoftmaxLossGradKernel(int64_t N, int64_t D, const int* label, const float* prob,
                                      const float* w, const float* p, const float* g, float* dx) {
  for (int64_t i = blockIdx.x; i < N; i += gridDim.x) {
    const bool valid = ValidTarget(i, D, label, prob);
    const float wg = valid ? (w ? w[i] : 1.0f) * *g : NAN;
    for (int64_t j = threadIdx.x; j < D; j += blockDim.x) {
      const int64_t k = i * D + j;
      const float target = prob ? prob[k] : (label[i] == j ? 1.0f : 0.0f);
      dx[k] = (p[k] - target) * wg;
    }
  }
}

class CudaSoftmaxWithLossBase : public Operator<CUDAContext> {
 public:
  CudaSoftmaxWithLossBase(const OperatorDef& def, Workspace* ws)
      : Operator<CUDAContext>(def, ws), args_(ReadSoftmaxWithLossArgs(*this)) {}

 protected:
  // Input i on this op's GPU (a copy when it lives elsewhere).
  const Tensor& DeviceInput(int i) { return OnDevice(Input(i), device(), &copies_.at(i)); }

  SoftmaxWithLossArgs args_;
  std::array<Tensor, 5> copies_;
};

class CudaSoftmaxWithLossOp final : public CudaSoftmaxWithLossBase {
 public:
  CudaSoftmaxWithLossOp(const OperatorDef& def, Workspace* ws)
      : CudaSoftmaxWithLossBase(def, ws), row_loss_(context_.device()), bad_(context_.device()) {}

  bool RunOnDevice() override {
    const bool weighted = InputSize() > 2;
    const SoftmaxWithLossShape s =
        CheckSoftmaxWithLossInputs(args_, Input(0), Input(1), weighted ? &Input(2) : nullptr);
    const Tensor& X = DeviceInput(0);
    const Tensor& T = DeviceInput(1);
    const float* w = weighted ? DeviceInput(2).data<float>() : nullptr;
    Tensor* P = Output(0);
    P->ResizeLike(X);
    float* p = P->mutable_data<float>();
    Tensor* L = Output(1);
    L->Resize(std::vector<int64_t>{});
    float* loss = L->mutable_data<float>();
    row_loss_.Resize(s.N);
    double* row_loss = row_loss_.mutable_data<double>();
    bad_.Resize(1);
    int* bad = bad_.mutable_data<int>();
    C2_CUDA_CHECK(cudaMemsetAsync(bad, 0, sizeof(int), context_.stream()));
    if (s.N > 0) {
      SoftmaxLossRowsKernel<<<CudaRowBlocks(s.N), kCudaThreadsPerBlock, 0, context_.stream()>>>(
          s.N, s.D, X.data<float>(), args_.label_prob ? nullptr : T.data<int>(),
          args_.label_prob ? T.data<float>() : nullptr, w, p, row_loss, bad);
      C2_CUDA_KERNEL_LAUNCH_CHECK();
    }
    SoftmaxLossFinishKernel<<<1, kCudaThreadsPerBlock, 0, context_.stream()>>>(
        s.N, row_loss, w, bad, args_.scale, loss);
    C2_CUDA_KERNEL_LAUNCH_CHECK();
    return true;
  }

 private:
  Tensor row_loss_;
  Tensor bad_;
};

class CudaSoftmaxWithLossGradientOp final : public CudaSoftmaxWithLossBase {
 public:
  CudaSoftmaxWithLossGradientOp(const OperatorDef& def, Workspace* ws)
      : CudaSoftmaxWithLossBase(def, ws), g_(context_.device()) {}

  bool RunOnDevice() override {
    const bool weighted = InputSize() == 5;
    const int p_index = weighted ? 3 : 2;
    const SoftmaxWithLossShape s =
        CheckSoftmaxWithLossInputs(args_, Input(0), Input(1), weighted ? &Input(2) : nullptr);
    CheckSoftmaxWithLossGradientInputs(Input(0), Input(p_index), Input(p_index + 1));
    const Tensor& T = DeviceInput(1);
    const float* w = weighted ? DeviceInput(2).data<float>() : nullptr;
    const Tensor& P = DeviceInput(p_index);
    const Tensor& dLoss = DeviceInput(p_index + 1);
    Tensor* dX = Output(0);
    dX->ResizeLike(Input(0));
    float* dx = dX->mutable_data<float>();
    g_.Resize(1);
    float* g = g_.mutable_data<float>();
    SoftmaxLossGradScaleKernel<<<1, kCudaThreadsPerBlock, 0, context_.stream()>>>(
        s.N, w, args_.scale, dLoss.data<float>(), g);
    C2_CUDA_KERNEL_LAUNCH_CHECK();
    if (s.N > 0 && s.D > 0) {
      SoftmaxLossGradKernel<<<CudaRowBlocks(s.N), kCudaThreadsPerBlock, 0, context_.stream()>>>(
          s.N, s.D, args_.label_prob ? nullptr : T.data<int>(),
          args_.label_prob ? T.data<float>() : nullptr, w, P.data<float>(), g, dx);
      C2_CUDA_KERNEL_LAUNCH_CHECK();
    }
    return true;
  }

 private:
  Tensor g_;
};

}  // namespace

REGISTER_CUDA_OPERATOR(SoftmaxWithLoss, CudaSoftmaxWithLossOp);
REGISTER_CUDA_OPERATOR(SoftmaxWithLossGradient, CudaSoftmaxWithLossGradientOp);

}  // namespace caffe2
