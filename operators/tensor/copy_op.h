// Copy family (spec ops §1.2.13). The kernels are device-generic: tensors move through the
// registered copy routines, so the same classes serve CPU and CUDA registrations.
//   Copy:             [X] -> [Y], a deep copy onto the op's device; X may live on another device.
//   CopyCPUToGPU:     [X on CPU] -> [Y on the op's GPU]   (CUDA registration only)
//   CopyGPUToCPU:     [X on a GPU] -> [Y on the CPU]      (CUDA registration only)
//   CopyOnDeviceLike: [X, like] -> [Y], X copied to the device of `like`.
//   EnsureCPUOutput:  [X] -> [Y], Y always on the CPU.
//   Alias:            [X] -> [Y], Y shares X's storage.
#pragma once

#include "core/operator.h"

namespace caffe2 {


class CopyOp final : public Operator<CPUContext> {
 public:
  using Operator<CPUContext>::Operator;
  bool RunOnDevice() override {
    if (!IsInputOutputAlias(0, 0)) Output(0)->CopyFrom(Input(0));
    return true;
  }
};

class CopyOnDeviceLikeOp final : public Operator<CPUContext> {
 public:
  using Operator<CPUContext>::Operator;
  bool RunOnDevice() override {
    Tensor* out = OutputBlob(0)->GetMutableTensor(Input(1).device());
    out->CopyFrom(Input(0));
    return true;
  }
};

// Copies to a fixed device type regardless of the op's device option.
template <int kDeviceType>
class CopyToDeviceTypeOp final : public Operator<CPUContext> {
 public:
  using Operator<CPUContext>::Operator;
  bool RunOnDevice() override {
    Device target = kDeviceType == kCPU ? Device{kCPU, 0} : device();
    OutputBlob(0)->GetMutableTensor(target)->CopyFrom(Input(0));
    return true;
  }
};

class EnsureCPUOutputOp final : public Operator<CPUContext> {
 public:
  using Operator<CPUContext>::Operator;
  bool RunOnDevice() override {
    if (IsInputOutputAlias(0, 0) && Input(0).device().type == kCPU) return true;
    Tensor* out = OutputBlob(0)->GetMutableTensor(Device{kCPU, 0});
    out->CopyFrom(Input(0));
    return true;
  }
};

class AliasOp final : public Operator<CPUContext> {
 public:
  using Operator<CPUContext>::Operator;
  bool RunOnDevice() override {
    if (!IsInputOutputAlias(0, 0)) Output(0)->ShareData(Input(0));
    return true;
  }
};

}  // namespace caffe2
