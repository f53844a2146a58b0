// Error checking for CUDA library calls: each macro throws EnforceNotMet naming the call, the
// library's error string and its code. C2_CUDA_CHECK for the runtime, C2_CUBLAS_CHECK,
// C2_CUDNN_CHECK and C2_CURAND_CHECK for the libraries, C2_CUDA_KERNEL_LAUNCH_CHECK() after a
// kernel launch (reports a bad launch configuration at once, not at the next sync).
#pragma once

#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <cudnn.h>
#include <curand.h>

#include "core/enforce.h"

#define C2_CUDA_CHECK(expr)                                                                      \
  do {                                                                                           \
    cudaError_t c2_cuda_status = (expr);                                                         \
    C2_ENFORCE(c2_cuda_status == cudaSuccess, "CUDA error in ", #expr, ": ",                     \
               cudaGetErrorString(c2_cuda_status), " (", static_cast<int>(c2_cuda_status), ")"); \
  } while (0)

#define C2_CUDA_KERNEL_LAUNCH_CHECK() C2_CUDA_CHECK(cudaGetLastError())

#define C2_CUBLAS_CHECK(expr)                                                                     \
  do {                                                                                            \
    cublasStatus_t c2_cublas_status = (expr);                                                     \
    C2_ENFORCE(c2_cublas_status == CUBLAS_STATUS_SUCCESS, "cuBLAS error in ", #expr, ": ",        \
               cublasGetStatusString(c2_cublas_status), " (", static_cast<int>(c2_cublas_status), \
               ")");                                                                              \
  } while (0)

#define C2_CUDNN_CHECK(expr)                                                                  \
  do {                                                                                        \
    cudnnStatus_t c2_cudnn_status = (expr);                                                   \
    C2_ENFORCE(c2_cudnn_status == CUDNN_STATUS_SUCCESS, "cuDNN error in ", #expr, ": ",       \
               cudnnGetErrorString(c2_cudnn_status), " (", static_cast<int>(c2_cudnn_status), \
               ")");                                                                          \
  } while (0)

#define C2_CURAND_CHECK(expr)                                                                     \
  do {                                                                                            \
    curandStatus_t c2_curand_status = (expr);                                                     \
    C2_ENFORCE(c2_curand_status == CURAND_STATUS_SUCCESS, "cuRAND error in ", #expr, ": status ", \
               static_cast<int>(c2_curand_status));                                               \
  } while (0)
