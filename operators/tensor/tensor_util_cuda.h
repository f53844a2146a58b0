// CUDA twins of the helpers in tensor_util.h, for the tensor operators' CUDA registrations.
// Include from CUDA operator sources only.
#pragma once

#include <cuda_runtime.h>

#include "core/cuda/cuda_check.h"
#include "core/cuda/cuda_context.h"
#include "operators/common/cuda_inputs.h"  // CheckOnDevice
#include "operators/tensor/tensor_util.h"

namespace caffe2 {

// Y (an output of the op) = a deep copy of X: a device-to-device copy queued on the op's stream
// when X lives on Y's GPU, else Tensor::CopyFrom (a synchronous copy from the host or another GPU).
inline void CopyTensorData(CUDAContext* context, const Tensor& X, Tensor* Y) {
  if (&X == Y) return;
  if (X.device() != Y->device() || !X.meta().initialized()) {
    Y->CopyFrom(X);
    return;
  }
  Y->Resize(X.dims());
  void* y = Y->raw_mutable_data(X.meta());
  if (X.nbytes() == 0) return;
  C2_CUDA_CHECK(
      cudaMemcpyAsync(y, X.raw_data(), X.nbytes(), cudaMemcpyDeviceToDevice, context->stream()));
}

}  // namespace caffe2
