// CUDA kernels of the cuDNN SpatialBN ops; the contract is in spatial_bn_op_cuda.h.
#include "operators/norm/spatial_bn_op_cuda.h"

#include "core/cuda/cuda_launch.h"

namespace caffe2 {
namespace {

__global__ void RunningUpdateKernel(int64_t C, float momentum, float epsilon,
                                    const float* saved_mean, const float* saved_inv_std,
                                    float* running_mean, float* running_var) {
  C2_CUDA_KERNEL_LOOP(c, C) {
    const float inv = saved_inv_std[c];
    const float var = fmaxf(0.f, 1.f / (inv * inv) - epsilon);
    running_mean[c] = running_mean[c] * momentum + saved_mean[c] * (1.f - momentum);
    running_var[c] = running_var[c] * momentum + var * (1.f - momentum);
  }
}

__global__ void StatsFromSumsKernel(int64_t C, double count, float momentum, float epsilon,
                                    const float* sums, const float* sumsq, float* saved_mean,
                                    float* saved_inv_std, float* batch_var, float* running_mean,
                                    float* running_var) {
  C2_CUDA_KERNEL_LOOP(c, C) {
    const double mean = static_cast<double>(sums[c]) / count;
    const double var = fmax(0.0, static_cast<double>(sumsq[c]) / count - mean * mean);
    saved_mean[c] = static_cast<float>(mean);
    saved_inv_std[c] = static_cast<float>(1.0 / sqrt(var + epsilon));
    batch_var[c] = static_cast<float>(var);
    running_mean[c] = running_mean[c] * momentum + static_cast<float>(mean) * (1.f - momentum);
    running_var[c] = running_var[c] * momentum + static_cast<float>(var) * (1.f - momentum);
  }
}

__global__ void InvStdKernel(int64_t C, float epsilon, const float* var, float* inv_std) {
  C2_CUDA_KERNEL_LOOP(c, C) { inv_std[c] = 1.f / sqrtf(var[c] + epsilon); }
}

__global__ void ScaleKernel(int64_t n, float alpha, const float* x, float* y) {
  C2_CUDA_KERNEL_LOOP(i, n) { y[i] = x[i] * alpha; }
}

// One block per channel; the threads stride over the channel's N * S values, then reduce in shared
// memory.
__global__ void BackpropSumsKernel(int64_t N, int64_t C, int64_t S, bool nchw, const float* x,
                                   const float* dy, const float* mean, const float* inv_std,
                                   float* dscale, float* dbias) {
  __shared__ double s_dscale[kCudaThreadsPerBlock];
  __shared__ double s_dbias[kCudaThreadsPerBlock];
  const int64_t c = blockIdx.x;
  const float m = mean[c];
  double acc_scale = 0, acc_bias = 0;
  for (int64_t k = threadIdx.x; k < N * S; k += blockDim.x) {
    const int64_t n = k / S, s = k % S;
    const int64_t i = nchw ? (n * C + c) * S + s : (n * S + s) * C + c;
    acc_scale += static_cast<double>((x[i] - m) * dy[i]);
    acc_bias += static_cast<double>(dy[i]);
  }
  s_dscale[threadIdx.x] = acc_scale;
  s_dbias[threadIdx.x] = acc_bias;
  __syncthreads();
  for (int half = blockDim.x / 2; half > 0; half /= 2) {
    if (threadIdx.x < half) {
      s_dscale[threadIdx.x] += s_dscale[threadIdx.x + half];
      s_dbias[threadIdx.x] += s_dbias[threadIdx.x + half];
    }
    __syncthreads();
  }
  if (threadIdx.x == 0) {
    dscale[c] = static_cast<float>(s_dscale[0] * inv_std[c]);
    dbias[c] = static_cast<float>(s_dbias[0]);
  }
}

__global__ void BackwardDxKernel(int64_t total, int64_t C, int64_t S, bool nchw, bool test,
                                 float inv_m, const float* x, const float* dy, const float* scale,
                                 const float* mean, const float* inv_std, const float* dscale,
                                 const float* dbias, float* dx) {
  C2_CUDA_KERNEL_LOOP(i, total) {
    const int64_t c = nchw ? (i / S) % C : i % C;
    const float a = scale[c] * inv_std[c];
    if (test) {
      dx[i] = a * dy[i];
    } else {
      dx[i] = a * (dy[i] - dbias[c] * inv_m - (x[i] - mean[c]) * inv_std[c] * dscale[c] * inv_m);
    }
  }
}

}  // namespace

void SpatialBNRunningUpdateCUDA(int64_t C, float momentum, float epsilon, const float* saved_mean,
                                const float* saved_inv_std, float* running_mean, float* running_var,
                                cudaStream_t stream) {
  RunningUpdateKernel<<<CudaBlocks(C), kCudaThreadsPerBlock, 0, stream>>>(
      C, momentum, epsilon, saved_mean, saved_inv_std, running_mean, running_var);
  C2_CUDA_KERNEL_LAUNCH_CHECK();
}

void SpatialBNStatsFromSumsCUDA(int64_t C, double count, float momentum, float epsilon,
                                const float* sums, const float* sumsq, float* saved_mean,
                                float* saved_inv_std, float* batch_var, float* running_mean,
                                float* running_var, cudaStream_t stream) {
  StatsFromSumsKernel<<<CudaBlocks(C), kCudaThreadsPerBlock, 0, stream>>>(
      C, count, momentum, epsilon, sums, sumsq, saved_mean, saved_inv_std, batch_var, running_mean,
      running_var);
  C2_CUDA_KERNEL_LAUNCH_CHECK();
}

void SpatialBNInvStdCUDA(int64_t C, float epsilon, const float* var, float* inv_std,
                         cudaStream_t stream) {
  InvStdKernel<<<CudaBlocks(C), kCudaThreadsPerBlock, 0, stream>>>(C, epsilon, var, inv_std);
  C2_CUDA_KERNEL_LAUNCH_CHECK();
}

void SpatialBNScaleCUDA(int64_t n, float alpha, const float* x, float* y, cudaStream_t stream) {
  ScaleKernel<<<CudaBlocks(n), kCudaThreadsPerBlock, 0, stream>>>(n, alpha, x, y);
  C2_CUDA_KERNEL_LAUNCH_CHECK();
}

void SpatialBNBackpropSumsCUDA(int64_t N, int64_t C, int64_t S, bool nchw, const float* x,
                               const float* dy, const float* mean, const float* inv_std,
                               float* dscale, float* dbias, cudaStream_t stream) {
  if (C == 0) return;
  BackpropSumsKernel<<<static_cast<unsigned>(C), kCudaThreadsPerBlock, 0, stream>>>(
      N, C, S, nchw, x, dy, mean, inv_std, dscale, dbias);
  C2_CUDA_KERNEL_LAUNCH_CHECK();
}

void SpatialBNBackwardDxCUDA(int64_t N, int64_t C, int64_t S, bool nchw, bool test, float inv_m,
                             const float* x, const float* dy, const float* scale, const float* mean,
                             const float* inv_std, const float* dscale, const float* dbias,
                             float* dx, cudaStream_t stream) {
  const int64_t total = N * C * S;
  if (total == 0) return;
  BackwardDxKernel<<<CudaBlocks(total), kCudaThreadsPerBlock, 0, stream>>>(
      total, C, S, nchw, test, inv_m, x, dy, scale, mean, inv_std, dscale, dbias, dx);
  C2_CUDA_KERNEL_LAUNCH_CHECK();
}

}  // namespace caffe2
