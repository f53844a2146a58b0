// Error checking for CUDA runtime calls: C2_CUDA_CHECK(expr) throws EnforceNotMet naming the call,
// the CUDA error and its code.
#pragma once

#include <cuda_runtime.h>

#include "core/enforce.h"

#define C2_CUDA_CHECK(expr)                                                                 \
  do {                                                                                      \
    cudaError_t c2_cuda_status = (expr);                                                    \
    C2_ENFORCE(c2_cuda_status == cudaSuccess, "CUDA error in ", #expr, ": ",                \
               cudaGetErrorString(c2_cuda_status), " (", static_cast<int>(c2_cuda_status), ")"); \
  } while (0)
