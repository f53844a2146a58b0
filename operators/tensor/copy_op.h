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

// Copies to a fixed device type regardless of the op's device option. In place, an input already
// on that device type is left alone; one on another device is replaced by its copy.
template <int kDeviceType>
class CopyToDeviceTypeOp final : public Operator<CPUContext> {
 public:
  using Operator<CPUContext>::Operator;
  bool RunOnDevice() override {
    const Tensor& in = Input(0);
    const Device target = kDeviceType == kCPU ? Device{kCPU, 0} : device();
    if (!IsInputOutputAlias(0, 0)) {
      OutputBlob(0)->GetMutableTensor(target)->CopyFrom(in);
    } else if (in.device().type != target.type) {
      auto* moved = new Tensor(target);
      moved->CopyFrom(in);
      OutputBlob(0)->Reset(moved);  // destroys the input only after the copy
    }
    return true;
  }
};

using EnsureCPUOutputOp = CopyToDeviceTypeOp<kCPU>;

class AliasOp final : public Operator<CPUContext> {
 public:
  using Operator<CPUContext>::Operator;
  bool RunOnDevice() override {
    if (!IsInputOutputAlias(0, 0)) Output(0)->ShareData(Input(0));
    return true;
  }
};

}  // namespace caffe2
