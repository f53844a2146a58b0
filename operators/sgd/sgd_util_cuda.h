// Host-side helpers of the CUDA optimizer kernels (*_op.cu of this family): the learning rate on
// the device, the in-place outputs of the sparse updates, and the dense updates' input check. The
// checks are the CPU ops' (sgd_util.h), so both devices give the same errors.
#pragma once

#include "core/cuda/cuda_context.h"
#include "core/operator.h"
#include "operators/common/cuda_inputs.h"
#include "operators/sgd/sgd_util.h"
#include "operators/tensor/tensor_util_cuda.h"

namespace caffe2 {

// The learning rate, a one-element float tensor, on `device` (copied into `scratch` when it was
// fed on the host): LearningRate writes it on the GPU, so the kernels read it there.
inline const float* DeviceLearningRate(const Tensor& lr_input, Device device, Tensor* scratch) {
  C2_ENFORCE(lr_input.numel() == 1 && lr_input.IsType<float>(),
             "lr must be a one-element float tensor, got ", lr_input.DebugString());
  return OnDevice(lr_input, device, scratch).data<float>();
}

// A dense update's state input (param or a moment): float, shaped like grad.
inline void CheckStateLikeGrad(const Tensor& t, const char* name, const Tensor& grad) {
  CheckFloat(t, name);
  CheckSameShape(t, name, grad, "grad");
}

// Output i, the op's in-place copy of input i (a copy on the stream when they differ), as float.
inline float* InPlaceOutput(OperatorBase* op, CUDAContext* context, int i, const char* name) {
  const Tensor& in = op->Input(i);
  CheckFloat(in, name);
  CheckOnDevice(in, context->device(), name);
  Tensor* out = op->Output(i);
  if (!op->IsInputOutputAlias(i, i)) CopyTensorData(context, in, out);
  return out->mutable_data<float>();
}

}  // namespace caffe2
