// CUDA SpatialSoftmaxWithLoss and SpatialSoftmaxWithLossGradient (float, NCHW; the contract,
// arguments and checks are the CPU kernels', spatial_softmax_with_loss_op.cc / .h). One thread per
// position (n, h, w) computes the softmax over D, stored in float; the loss takes log(max(p,
// 1e-20)) of that stored value. Each block sums its positions' loss and weight in double, and one
// block adds the blocks' sums, so the result does not depend on scheduling.
//
// Label values: labels fed on the host are checked there and raise exactly as on the CPU. On the
// GPU a label other than -1 outside [0, D) cannot raise, so it poisons: the loss becomes NaN (even
// when the weights sum to 0) and dX is NaN at that position.
//
// Inputs living on the host or on another GPU (labels, weights, dLoss) are copied to the op's GPU.
#include <array>
#include <cmath>

#include "core/cuda/cuda_context.h"
#include "core/cuda/cuda_launch.h"
#include "core/operator.h"
#include "operators/common/block_reduce_cuda.cuh"
#include "operators/common/cuda_inputs.h"
#include "operators/loss/spatial_softmax_with_loss_op.h"

namespace caffe2 {
namespace {

constexpr float kLogThreshold = 1e-20f;  // as the CPU kernel
constexpr int kIgnore = kSpatialSoftmaxIgnoreLabel;

__device__ bool OutOfRange(int label, int64_t D) {
  return label != kIgnore && (label < 0 || label >= D);
}

// Over the positions (n, k) of a (N, D, HW) tensor, block b writes partial_w[b], the weight of its
// labelled positions, and (when x is not null) computes p = softmax over D at each position and
// partial_loss[b] = sum of w * -log(max(p[label], 1e-20)). An out-of-range label sets *bad.
__global__ void SpatialPartialsKernel(int64_t positions, int64_t D, int64_t HW, const float* x,
                                      const int* label, const float* w, float* p,
                                      double* partial_loss, double* partial_w, int* bad) {
  double loss = 0, weight = 0;
  C2_CUDA_KERNEL_LOOP(pos, positions) {
    const int l = label[pos];
    if (OutOfRange(l, D)) *bad = 1;
    if (x) {
      const int64_t base = (pos / HW) * D * HW + pos % HW;
      const float* xs = x + base;
      float* ps = p + base;
      float m = -INFINITY;
      for (int64_t d = 0; d < D; ++d) m = fmaxf(m, xs[d * HW]);
      float sum = 0;
      for (int64_t d = 0; d < D; ++d) sum += (ps[d * HW] = expf(xs[d * HW] - m));
      for (int64_t d = 0; d < D; ++d) ps[d * HW] /= sum;
      if (l != kIgnore && !OutOfRange(l, D)) {
        loss -= (w ? w[pos] : 1.0f) * logf(fmaxf(ps[l * HW], kLogThreshold));
      }
    }
    if (l != kIgnore) weight += w ? w[pos] : 1.0f;
  }
  loss = BlockSum(loss);
  weight = BlockSum(weight);
  if (threadIdx.x == 0) {
    if (partial_loss) partial_loss[blockIdx.x] = loss;
    partial_w[blockIdx.x] = weight;
  }
}

// One block adds the partials. Forward (dloss null): *out = the loss, scale * loss / total (0 when
// total is 0, NaN when *bad). Gradient: *out = scale * dLoss / total in float (0 when total is 0).
__global__ void SpatialFinishKernel(int blocks, const double* partial_loss, const double* partial_w,
                                    const int* bad, float scale, const float* dloss, float* out) {
  double loss = 0, weight = 0;
  for (int b = threadIdx.x; b < blocks; b += blockDim.x) {
    if (partial_loss) loss += partial_loss[b];
    weight += partial_w[b];
  }
  loss = BlockSum(loss);
  weight = BlockSum(weight);
  if (threadIdx.x == 0) {
    const float total = static_cast<float>(weight);
    if (dloss) {
      *out = total != 0 ? scale * dloss[0] / total : 0.0f;
    } else {
      *out = *bad ? NAN : total != 0 ? static_cast<float>(scale * loss / total) : 0.0f;
    }
  }
}

// dX = (p - onehot(label)) * w * g; 0 at ignored positions, NaN at out-of-range labels.
__global__ void SpatialGradKernel(int64_t total, int64_t D, int64_t HW, const int* label,
                                  const float* w, const float* p, const float* g, float* dx) {
  C2_CUDA_KERNEL_LOOP(i, total) {
    const int64_t pos = (i / (D * HW)) * HW + i % HW;
    const int64_t d = (i / HW) % D;
    const int l = label[pos];
    const float wg = l == kIgnore ? 0.0f : OutOfRange(l, D) ? NAN : (w ? w[pos] : 1.0f) * *g;
    dx[i] = (p[i] - (d == l ? 1.0f : 0.0f)) * wg;
  }
}

class CudaSpatialSoftmaxWithLossBase : public Operator<CUDAContext> {
 public:
  CudaSpatialSoftmaxWithLossBase(const OperatorDef& def, Workspace* ws)
      : Operator<CUDAContext>(def, ws),
        scale_(ReadSpatialSoftmaxWithLossScale(*this)),
        partials_(context_.device()),
        scalars_(context_.device()) {}

 protected:
  // Input i on this op's GPU (a copy when it lives elsewhere).
  const Tensor& DeviceInput(int i) { return OnDevice(Input(i), device(), &copies_.at(i)); }

  // Runs SpatialPartialsKernel and SpatialFinishKernel into *out (x and p null for the gradient).
  void LossOrScale(const Tensor& X, const int* label, const float* w, const float* x, float* p,
                   const float* dloss, float* out) {
    const int64_t D = X.dim(1), HW = X.dim(2) * X.dim(3), positions = X.dim(0) * HW;
    const int blocks = CudaBlocks(positions);
    partials_.Resize(2 * blocks);
    double* partial_loss = partials_.mutable_data<double>();
    scalars_.Resize(1);
    int* bad = scalars_.mutable_data<int>();
    C2_CUDA_CHECK(cudaMemsetAsync(bad, 0, sizeof(int), context_.stream()));
    if (positions > 0) {
      SpatialPartialsKernel<<<blocks, kCudaThreadsPerBlock, 0, context_.stream()>>>(
          positions, D, HW, x, label, w, p, x ? partial_loss : nullptr, partial_loss + blocks, bad);
      C2_CUDA_KERNEL_LAUNCH_CHECK();
    } else {
      C2_CUDA_CHECK(cudaMemsetAsync(partial_loss, 0, partials_.nbytes(), context_.stream()));
    }
    SpatialFinishKernel<<<1, kCudaThreadsPerBlock, 0, context_.stream()>>>(
        blocks, x ? partial_loss : nullptr, partial_loss + blocks, bad, scale_, dloss, out);
    C2_CUDA_KERNEL_LAUNCH_CHECK();
  }

  float scale_;
  std::array<Tensor, 5> copies_;
  Tensor partials_;  // per-block loss and weight sums
  Tensor scalars_;   // the bad-label flag
};

class CudaSpatialSoftmaxWithLossOp final : public CudaSpatialSoftmaxWithLossBase {
 public:
  using CudaSpatialSoftmaxWithLossBase::CudaSpatialSoftmaxWithLossBase;

  bool RunOnDevice() override {
    const bool weighted = InputSize() > 2;
    CheckSpatialSoftmaxWithLossInputs(Input(0), Input(1), weighted ? &Input(2) : nullptr);
    const Tensor& X = DeviceInput(0);
    const int* label = DeviceInput(1).data<int>();
    const float* w = weighted ? DeviceInput(2).data<float>() : nullptr;
    Tensor* P = Output(0);
    P->ResizeLike(X);
    float* p = P->mutable_data<float>();
    Tensor* L = Output(1);
    L->Resize(std::vector<int64_t>{});
    LossOrScale(X, label, w, X.data<float>(), p, nullptr, L->mutable_data<float>());
    return true;
  }
};

class CudaSpatialSoftmaxWithLossGradientOp final : public CudaSpatialSoftmaxWithLossBase {
 public:
  CudaSpatialSoftmaxWithLossGradientOp(const OperatorDef& def, Workspace* ws)
      : CudaSpatialSoftmaxWithLossBase(def, ws), g_(context_.device()) {}

  bool RunOnDevice() override {
    const bool weighted = InputSize() == 5;
    const int p_index = weighted ? 3 : 2;
    const Tensor& X = Input(0);
    CheckSpatialSoftmaxWithLossInputs(X, Input(1), weighted ? &Input(2) : nullptr);
    CheckSpatialSoftmaxWithLossGradientInputs(X, Input(p_index), Input(p_index + 1));
    const int* label = DeviceInput(1).data<int>();
    const float* w = weighted ? DeviceInput(2).data<float>() : nullptr;
    const Tensor& P = DeviceInput(p_index);
    const Tensor& dLoss = DeviceInput(p_index + 1);
    Tensor* dX = Output(0);
    dX->ResizeLike(X);
    float* dx = dX->mutable_data<float>();
    g_.Resize(1);
    float* g = g_.mutable_data<float>();
    LossOrScale(X, label, w, nullptr, nullptr, dLoss.data<float>(), g);
    const int64_t total = X.numel();
    if (total > 0) {
      SpatialGradKernel<<<CudaBlocks(total), kCudaThreadsPerBlock, 0, context_.stream()>>>(
          total, X.dim(1), X.dim(2) * X.dim(3), label, w, P.data<float>(), g, dx);
      C2_CUDA_KERNEL_LAUNCH_CHECK();
    }
    return true;
  }

 private:
  Tensor g_;
};

}  // namespace

REGISTER_CUDA_OPERATOR(SpatialSoftmaxWithLoss, CudaSpatialSoftmaxWithLossOp);
REGISTER_CUDA_OPERATOR(SpatialSoftmaxWithLossGradient, CudaSpatialSoftmaxWithLossGradientOp);

}  // namespace caffe2
