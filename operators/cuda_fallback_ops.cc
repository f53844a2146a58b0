// CUDA registrations that run the op's CPU kernel (GPUFallbackOp, core/cuda/gpu_fallback_op.h):
// the inputs are copied to the host, the CPU kernel runs, the outputs are copied back to the GPU.
// Correct for every op below, and cheap where the work is small (metrics, schedules, shapes);
// a GPU kernel replaces an entry here when a model's step time shows it. Ops with a CUDA kernel
// of their own are registered beside their CPU kernel, never here.
#include "core/cuda/gpu_fallback_op.h"

namespace caffe2 {

// Learning-rate schedule and printing: a handful of scalars per step.
REGISTER_CUDA_OPERATOR(Print, GPUFallbackOp);
REGISTER_CUDA_OPERATOR(LearningRate, GPUFallbackOp);

// Shapes, layout and indexing.
REGISTER_CUDA_OPERATOR(Shape, GPUFallbackOp);
REGISTER_CUDA_OPERATOR(Size, GPUFallbackOp);
REGISTER_CUDA_OPERATOR(TopK, GPUFallbackOp);
REGISTER_CUDA_OPERATOR(OneHot, GPUFallbackOp);
REGISTER_CUDA_OPERATOR(TopKGradient, GPUFallbackOp);
REGISTER_CUDA_OPERATOR(SparseToDense, GPUFallbackOp);
REGISTER_CUDA_OPERATOR(LengthsRangeFill, GPUFallbackOp);
REGISTER_CUDA_OPERATOR(UniqueUniformFill, GPUFallbackOp);

// Convolution-like ops outside the cuDNN set.
REGISTER_CUDA_OPERATOR(ConvTranspose, GPUFallbackOp);
REGISTER_CUDA_OPERATOR(ConvTransposeGradient, GPUFallbackOp);
REGISTER_CUDA_OPERATOR(LpPool, GPUFallbackOp);
REGISTER_CUDA_OPERATOR(LpPoolGradient, GPUFallbackOp);

}  // namespace caffe2
