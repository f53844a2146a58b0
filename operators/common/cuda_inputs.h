// Inputs of a CUDA operator that may live elsewhere (on the host, or on another GPU): OnDevice
// returns the tensor itself when it is on `device`, else copies it into `scratch` (kept by the op,
// so its storage is reused across runs) and returns the copy. Used for learning rates and weights
// that scripts feed on the CPU, and for Sum's inputs from other GPUs. CheckOnDevice is for the
// inputs a kernel reads (or updates) in place, which must already be on the op's GPU.
#pragma once

#include <string>

#include "core/tensor.h"

namespace caffe2 {

inline const Tensor& OnDevice(const Tensor& t, Device device, Tensor* scratch) {
  if (t.device() == device) return t;
  scratch->SetDevice(device);
  scratch->CopyFrom(t);
  return *scratch;
}

inline void CheckOnDevice(const Tensor& t, Device device, const std::string& what) {
  C2_ENFORCE(t.device() == device, what, " must live on the op's device ", DeviceString(device),
             ", got ", t.DebugString());
}

}  // namespace caffe2
