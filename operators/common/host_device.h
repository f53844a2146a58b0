// C2_HOST_DEVICE marks a function that the CPU kernels and the CUDA kernels share: nvcc compiles it
// for both (__host__ __device__), the host compiler sees a plain function. This is an annotation
// for the compiler at hand, not a build switch: every build compiles the same code.
#pragma once

#if defined(__CUDACC__)
#define C2_HOST_DEVICE __host__ __device__
#else
#define C2_HOST_DEVICE
#endif
