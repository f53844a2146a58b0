// Copy family on the CPU (spec ops §1.2.13).
//   Copy:             [X] -> [Y], a deep copy; X may live on another device.
//   CopyOnDeviceLike: [X, like] -> [Y], X copied to the device of `like`.
//   EnsureCPUOutput:  [X] -> [Y], Y always on the CPU.
//   Alias:            [X] -> [Y], Y shares X's storage.
// Copy's gradient is CopyOnDeviceLike([dY, X]) -> dX; Alias passes dY through.
#include "core/gradient.h"
#include "core/operator.h"

namespace caffe2 {
namespace {

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

class GetCopyGradient final : public GradientMakerBase {
  using GradientMakerBase::GradientMakerBase;
  std::vector<OperatorDef> GetGradientDefs() override {
    return SingleGradientDef("CopyOnDeviceLike", "", {GO(0), I(0)}, {GI(0)});
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
