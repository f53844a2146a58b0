#include "core/cuda/gpu_fallback_op.h"

#include <string>

#include "core/gpu_fallback_declarations.h"

namespace caffe2 {

GPUFallbackOp::GPUFallbackOp(const OperatorDef& def, Workspace* ws)
    : Operator<CUDAContext>(def, ws) {
  OperatorDef cpu_def = def;
  cpu_def.clear_device_option();
  cpu_def.clear_engine();
  for (int i = 0; i < def.input_size(); ++i) {
    cpu_def.set_input(i, "fallback_input_" + std::to_string(i));
    local_inputs_.push_back(local_ws_.CreateBlob(cpu_def.input(i)));
  }
  for (int j = 0; j < def.output_size(); ++j) {
    std::string local = "fallback_output_" + std::to_string(j);
    for (int i = 0; i < def.input_size(); ++i) {
      if (def.output(j) == def.input(i)) local = cpu_def.input(i);  // keep in-place in place
    }
    cpu_def.set_output(j, local);
    local_outputs_.push_back(local_ws_.CreateBlob(local));
  }
  cpu_op_ = CreateOperator(cpu_def, &local_ws_);
}

bool GPUFallbackOp::RunOnDevice() {
  for (int i = 0; i < InputSize(); ++i) {
    local_inputs_[i]->GetMutableTensor(Device{kCPU, 0})->CopyFrom(Input(i));
  }
  if (!cpu_op_->Run()) return false;
  for (int j = 0; j < OutputSize(); ++j) {
    const Blob& local = *local_outputs_[j];
    C2_ENFORCE(local.IsTensor(), "output ", j, " of the CPU kernel is not a tensor: it holds ",
               local.TypeName());
    Output(j)->CopyFrom(local.Get<Tensor>());
  }
  return true;
}

namespace {

// Every REGISTER_GPU_FALLBACK of the CPU sources becomes a CUDA registration of GPUFallbackOp.
const bool kDeclaredFallbacksRegistered [[maybe_unused]] = [] {
  OnGpuFallbackDeclared([](const std::string& type) {
    OperatorRegistry::Register(kCUDA, type, detail::MakeCreator<GPUFallbackOp>());
  });
  return true;
}();

}  // namespace

}  // namespace caffe2
