// The GPU transform of ImageInput (ops spec §2.4, use_gpu_transform): `in` holds N crops of
// H x W x C bytes (NHWC) on the GPU; `out` receives (x - mean[c]) * inv_std[c] in NCHW, as float,
// or as float16 when `half`. mean and inv_std are C floats on the GPU. Runs on `stream`.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

namespace caffe2 {

void NormalizeImagesToNCHW(int64_t N, int64_t H, int64_t W, int64_t C, const uint8_t* in,
                           const float* mean, const float* inv_std, bool half, void* out,
                           cudaStream_t stream);

}  // namespace caffe2
