// GPU fallbacks declared beside the op's CPU registration: REGISTER_GPU_FALLBACK(Type) in the op's
// .cc says that the op's CUDA registration runs its CPU kernel (GPUFallbackOp,
// core/cuda/gpu_fallback_op.h: inputs copied to the host, the CPU kernel run, outputs copied back).
// Meant for ops whose work is small or serial (schedules, shapes, metrics), where a kernel would
// not pay for itself; a CUDA kernel in the op's <op>_op.cu replaces the declaration when a model's
// step time shows it.
//
// The declaration lives in the CPU library, which knows nothing of CUDA; the CUDA backend
// (libcaffe2_cuda) registers a GPUFallbackOp under every declared type when it loads, and under
// any type declared after that (a library of ops loaded later) as it is declared. A build without
// CUDA keeps the declarations and registers nothing.
#pragma once

#include <functional>
#include <string>
#include <vector>

namespace caffe2 {

// Declares a fallback for `type`; declaring one type twice throws at load time.
bool DeclareGpuFallback(const std::string& type);

// The declared types, sorted.
std::vector<std::string> DeclaredGpuFallbacks();

// Called once by the CUDA backend: `register_fallback` runs for every type declared so far, and
// then for each type declared later, as it is declared.
void OnGpuFallbackDeclared(std::function<void(const std::string&)> register_fallback);

}  // namespace caffe2

#define REGISTER_GPU_FALLBACK(type) \
  static const bool c2_gpu_fallback_##type [[maybe_unused]] = ::caffe2::DeclareGpuFallback(#type)
