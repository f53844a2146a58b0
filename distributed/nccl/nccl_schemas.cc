// Schemas of the single-process NCCL operators (ops spec §3.6; contract in nccl_op.h). Built into
// every configuration, so nets holding these ops can be built, checked and placed anywhere; the
// kernels are CUDA-only (nccl_*_op.cc with NCCL, no_nccl.cc without).
#include "core/gradient.h"
#include "core/device.h"
#include "core/op_schema.h"

namespace caffe2 {
namespace {

DeviceOption Gpu(int id) {
  DeviceOption option;
  option.set_device_type(kCUDA);
  option.set_cuda_gpu_id(id);
  return option;
}

// As upstream, input i is assumed to live on GPU i, and so is output i (NCCLReduce: its output is
// on the root's GPU).
std::pair<std::vector<DeviceOption>, std::vector<DeviceOption>> InputIOnGpuI(
    const OperatorDef& def) {
  std::vector<DeviceOption> in, out;
  for (int i = 0; i < def.input_size(); ++i) in.push_back(Gpu(i));
  int root = 0;
  for (const auto& arg : def.arg()) {
    if (arg.name() == "root" && arg.has_i()) root = static_cast<int>(arg.i());
  }
  for (int i = 0; i < def.output_size(); ++i) {
    out.push_back(Gpu(def.type() == "NCCLReduce" ? root : i));
  }
  return {in, out};
}

bool SameCount(int in, int out) { return in == out; }

}  // namespace

OPERATOR_SCHEMA(NCCLAllreduce)
    .NumInputs(1, OpSchema::kInf)
    .NumOutputs(1, OpSchema::kInf)
    .NumInputsOutputs(SameCount)
    .AllowOneToOneInplace()
    .IdenticalTypeAndShape()
    .InputsCanCrossDevices()
    .DeviceInference(InputIOnGpuI)
    .SetDoc(R"DOC(
Sums one tensor per GPU (each input on a different GPU, all of one dtype and size) and gives
every GPU the total: output i, on input i's GPU. In place allowed. One input: a copy.
Device inference assumes input i is on GPU i.
)DOC")
    .Input(0, "X_0..X_n-1", "one CUDA tensor per GPU")
    .Output(0, "Y_0..Y_n-1", "the sum, on the GPU of the matching input");

OPERATOR_SCHEMA(NCCLBroadcast)
    .NumInputs(1, OpSchema::kInf)
    .NumOutputs(1, OpSchema::kInf)
    .NumInputsOutputs(SameCount)
    .EnforceOneToOneInplace()
    .IdenticalTypeAndShape()
    .InputsCanCrossDevices()
    .DeviceInference(InputIOnGpuI)
    .SetDoc("Copies input `root` into every input, in place (one CUDA tensor per GPU).")
    .Arg("root", "(int, default 0) the index of the input that is sent")
    .Input(0, "X_0..X_n-1", "one CUDA tensor per GPU")
    .Output(0, "X_0..X_n-1", "the same tensors, each now equal to X_root");

OPERATOR_SCHEMA(NCCLReduce)
    .NumInputs(1, OpSchema::kInf)
    .NumOutputs(1)
    .AllowInplace({{0, 0}})
    .IdenticalTypeAndShapeOfInput(0)
    .InputsCanCrossDevices()
    .DeviceInference(InputIOnGpuI)
    .SetDoc(
        "Sums one tensor per GPU into Y, on the GPU of input `root`. In place only as Y = X_0 "
        "with root 0.")
    .Arg("root", "(int, default 0) the index of the input whose GPU receives the sum")
    .Input(0, "X_0..X_n-1", "one CUDA tensor per GPU")
    .Output(0, "Y", "the sum");

OPERATOR_SCHEMA(NCCLAllGather)
    .NumInputs(1, OpSchema::kInf)
    .NumOutputs(1, OpSchema::kInf)
    .NumInputsOutputs(SameCount)
    .InputsCanCrossDevices()
    .DeviceInference(InputIOnGpuI)
    .TensorInference([](const OperatorDef&, const std::vector<TensorShape>& in) {
      std::vector<TensorShape> out(in);
      for (auto& shape : out) {
        shape.mutable_dims()->Add(static_cast<int64_t>(in.size()));
        for (int d = shape.dims_size() - 1; d > 0; --d)
          shape.mutable_dims()->SwapElements(d, d - 1);
      }
      return out;
    })
    .SetDoc(
        "Gives every GPU all the inputs: output i, on input i's GPU, has dims [n] + dims(X_i) "
        "and holds X_0..X_n-1 in order.")
    .Input(0, "X_0..X_n-1", "one CUDA tensor per GPU")
    .Output(0, "Y_0..Y_n-1", "the gathered inputs");

OPERATOR_SCHEMA(NCCLReduceScatter)
    .NumInputs(1, OpSchema::kInf)
    .NumOutputs(1, OpSchema::kInf)
    .NumInputsOutputs(SameCount)
    .InputsCanCrossDevices()
    .DeviceInference(InputIOnGpuI)
    .TensorInference([](const OperatorDef&, const std::vector<TensorShape>& in) {
      std::vector<TensorShape> out(in);
      for (auto& shape : out) {
        if (shape.dims_size() > 0) shape.mutable_dims()->erase(shape.mutable_dims()->begin());
      }
      return out;
    })
    .SetDoc(
        "Inputs of dims [n, ...]: output i, on input i's GPU, is the sum over the inputs of "
        "their block i, of dims dims(X_i)[1:].")
    .Input(0, "X_0..X_n-1", "one CUDA tensor per GPU, first dimension n")
    .Output(0, "Y_0..Y_n-1", "block i of the sum");

REGISTER_GRADIENT(NCCLAllreduce, NoGradient);
REGISTER_GRADIENT(NCCLBroadcast, NoGradient);
REGISTER_GRADIENT(NCCLReduce, NoGradient);
REGISTER_GRADIENT(NCCLAllGather, NoGradient);
REGISTER_GRADIENT(NCCLReduceScatter, NoGradient);

}  // namespace caffe2
