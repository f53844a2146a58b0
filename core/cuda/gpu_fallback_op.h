// GPUFallbackOp: runs an operator's CPU kernel for its CUDA registration (spec §5.9). Each run
// copies the tensor inputs to the host, runs the CPU operator in a private workspace, and copies
// its outputs back to the op's GPU. An output that is in place with an input stays in place.
//
// For ops whose work is small or inherently serial (bookkeeping, metrics, data shuffling), where a
// kernel would not pay for itself. Declare it beside the op's CPU registration with
//   REGISTER_GPU_FALLBACK(Type);   (core/gpu_fallback_declarations.h)
// and the CUDA backend registers this op for the type when it loads.
// The CPU operator is created from the same def through the registry, so it must be registered for
// the CPU under the same type. Inputs must be tensors: a GPU op never sees host-only objects.
#pragma once

#include <memory>
#include <vector>

#include "core/cuda/cuda_context.h"
#include "core/operator.h"
#include "core/workspace.h"

namespace caffe2 {

class GPUFallbackOp final : public Operator<CUDAContext> {
 public:
  GPUFallbackOp(const OperatorDef& def, Workspace* ws);
  bool RunOnDevice() override;

 private:
  Workspace local_ws_;
  std::vector<Blob*> local_inputs_;
  std::vector<Blob*> local_outputs_;
  std::unique_ptr<OperatorBase> cpu_op_;
};

// For a CUDA op that hands some cases (arguments its kernel does not cover) to its CPU kernel:
// Run(op) builds a GPUFallbackOp from the op's def on first use and runs it.
class LazyGPUFallback {
 public:
  bool Run(const OperatorBase& op) {
    if (!fallback_) fallback_ = std::make_unique<GPUFallbackOp>(op.debug_def(), op.workspace());
    return fallback_->Run();
  }

 private:
  std::unique_ptr<GPUFallbackOp> fallback_;
};

}  // namespace caffe2
