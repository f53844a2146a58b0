// Copy family on the CPU: schemas, gradients and CPU registrations (classes in copy_op.h).
#include "operators/tensor/copy_op.h"

#include "core/gradient.h"

namespace caffe2 {
namespace {

class GetCopyGradient final : public GradientMakerBase {
  using GradientMakerBase::GradientMakerBase;
  std::vector<OperatorDef> GetGradientDefs() override {
    return SingleGradientDef("CopyOnDeviceLike", "", {GO(0), I(0)}, {GI(0)});
  }
};

// The gradient of CopyCPUToGPU is CopyGPUToCPU and the other way round.
template <bool kFromCpu>
class GetCopyToOtherSideGradient final : public GradientMakerBase {
  using GradientMakerBase::GradientMakerBase;
  std::vector<OperatorDef> GetGradientDefs() override {
    return SingleGradientDef(kFromCpu ? "CopyGPUToCPU" : "CopyCPUToGPU", "", {GO(0)}, {GI(0)});
  }
};

class GetAliasGradient final : public GradientMakerBase {
  using GradientMakerBase::GradientMakerBase;
  std::vector<OperatorDef> GetGradientDefs() override {
    SetDense(0, GO(0));
    return {};
  }
};

}  // namespace

REGISTER_CPU_OPERATOR(Copy, CopyOp);
OPERATOR_SCHEMA(Copy)
    .NumInputs(1)
    .NumOutputs(1)
    .IdenticalTypeAndShape()
    .InputsCanCrossDevices()
    .SetDoc("Copies the input tensor into the output, across devices if needed.")
    .Input(0, "input", "The tensor to copy")
    .Output(0, "output", "The copy");
REGISTER_GRADIENT(Copy, GetCopyGradient);

// Registered for CUDA only (copy_op.cu); the schemas live here with the others.
OPERATOR_SCHEMA(CopyCPUToGPU)
    .NumInputs(1)
    .NumOutputs(1)
    .IdenticalTypeAndShape()
    .InputsCanCrossDevices()
    .DeviceInference([](const OperatorDef& def) {
      DeviceOption cpu;
      cpu.set_device_type(kCPU);
      return std::make_pair(std::vector<DeviceOption>{cpu},
                            std::vector<DeviceOption>{def.device_option()});
    })
    .SetDoc("Copies a CPU tensor to the op's GPU.");
REGISTER_GRADIENT(CopyCPUToGPU, GetCopyToOtherSideGradient<true>);
OPERATOR_SCHEMA(CopyGPUToCPU)
    .NumInputs(1)
    .NumOutputs(1)
    .IdenticalTypeAndShape()
    .InputsCanCrossDevices()
    .DeviceInference([](const OperatorDef& def) {
      DeviceOption cpu;
      cpu.set_device_type(kCPU);
      return std::make_pair(std::vector<DeviceOption>{def.device_option()},
                            std::vector<DeviceOption>{cpu});
    })
    .SetDoc("Copies a tensor on the op's GPU to the CPU.");
REGISTER_GRADIENT(CopyGPUToCPU, GetCopyToOtherSideGradient<false>);

REGISTER_CPU_OPERATOR(CopyOnDeviceLike, CopyOnDeviceLikeOp);
OPERATOR_SCHEMA(CopyOnDeviceLike)
    .NumInputs(2)
    .NumOutputs(1)
    .IdenticalTypeAndShapeOfInput(0)
    .InputsCanCrossDevices()
    .SetDoc("Copies input 0 to the device of input 1.");
REGISTER_GRADIENT(CopyOnDeviceLike, ShouldNotDoGradient);

REGISTER_CPU_OPERATOR(EnsureCPUOutput, EnsureCPUOutputOp);
OPERATOR_SCHEMA(EnsureCPUOutput)
    .NumInputs(1)
    .NumOutputs(1)
    .AllowInplace({{0, 0}})
    .IdenticalTypeAndShape()
    .InputsCanCrossDevices()
    .SetDoc("Copies the input to a CPU tensor (or keeps it when already on the CPU).");
REGISTER_GRADIENT(EnsureCPUOutput, NoGradient);

REGISTER_CPU_OPERATOR(Alias, AliasOp);
OPERATOR_SCHEMA(Alias)
    .NumInputs(1)
    .NumOutputs(1)
    .AllowInplace({{0, 0}})
    .IdenticalTypeAndShape()
    .SetDoc("Makes the output share the input's storage (no copy).");
REGISTER_GRADIENT(Alias, GetAliasGradient);

}  // namespace caffe2
