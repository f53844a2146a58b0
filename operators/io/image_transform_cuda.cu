// The GPU transform of ImageInput: uint8 NHWC crops to normalized NCHW float or float16.
#include <cuda_fp16.h>

#include "core/cuda/cuda_launch.h"
#include "operators/common/half_cuda.cuh"
#include "operators/io/image_transform_cuda.h"

namespace caffe2 {
namespace {

// in: (N, H, W, C) bytes; out: (N, C, H, W). One thread per output element.
template <class T>
__global__ void NormalizeToNCHW(int64_t total, int C, int64_t plane, const uint8_t* in,
                                const float* mean, const float* inv_std, T* out) {
  C2_CUDA_KERNEL_LOOP(i, total) {
    const int64_t hw = i % plane;
    const int c = static_cast<int>((i / plane) % C);
    const int64_t n = i / (plane * C);
    const float x = in[(n * plane + hw) * C + c];
    out[i] = FromCompute<T>((x - mean[c]) * inv_std[c]);
  }
}

template <class T>
void Launch(int64_t N, int64_t H, int64_t W, int64_t C, const uint8_t* in, const float* mean,
            const float* inv_std, T* out, cudaStream_t stream) {
  const int64_t total = N * C * H * W;
  if (total == 0) return;
  NormalizeToNCHW<<<CudaBlocks(total), kCudaThreadsPerBlock, 0, stream>>>(
      total, static_cast<int>(C), H * W, in, mean, inv_std, out);
  C2_CUDA_KERNEL_LAUNCH_CHECK();
}

}  // namespace

void NormalizeImagesToNCHW(int64_t N, int64_t H, int64_t W, int64_t C, const uint8_t* in,
                           const float* mean, const float* inv_std, bool half, void* out,
                           cudaStream_t stream) {
  if (half) {
    Launch(N, H, W, C, in, mean, inv_std, static_cast<__half*>(out), stream);
  } else {
    Launch(N, H, W, C, in, mean, inv_std, static_cast<float*>(out), stream);
  }
}

}  // namespace caffe2
