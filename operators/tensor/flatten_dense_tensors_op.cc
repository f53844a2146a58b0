#include "operators/tensor/flatten_dense_tensors_op.h"

#include <limits>

#include "core/allocator.h"
#include "core/gradient.h"

namespace caffe2 {
namespace {

// The common dtype of inputs [first, InputSize()); only fixed-size element types move as bytes.
const TypeMeta& CommonMeta(const OperatorBase& op, int first) {
  const TypeMeta& meta = op.Input(first).meta();
  C2_ENFORCE(meta.copy == nullptr, "input ", first, " has type ", meta.name,
             ", only fixed-size element types can be flattened");
  for (int i = first + 1; i < op.InputSize(); ++i) {
    C2_ENFORCE(op.Input(i).meta() == meta, "input ", i, " is ", op.Input(i).meta().name,
               " but input ", first, " is ", meta.name);
  }
  return meta;
}

}  // namespace

bool FlattenDenseTensorsOp::RunOnDevice() {
  const TypeMeta& meta = CommonMeta(*this, 0);
  int64_t total = 0;
  for (int i = 0; i < InputSize(); ++i) total += Input(i).numel();
  Tensor* buffer = Output(0);
  buffer->Resize(total);
  char* dst = static_cast<char*>(buffer->raw_mutable_data(meta));
  for (int i = 0; i < InputSize(); ++i) {
    const Tensor& X = Input(i);
    CopyBytes(X.nbytes(), X.raw_data(), X.device(), dst, buffer->device());
    dst += X.nbytes();
  }
  return true;
}

UnflattenDenseTensorsOp::UnflattenDenseTensorsOp(const OperatorDef& def, Workspace* ws)
    : Operator<CPUContext>(def, ws) {
  C2_ENFORCE(OutputSize() == InputSize() - 1, "needs one output per tensor, got ", InputSize() - 1,
             " tensors and ", OutputSize(), " outputs");
}

bool UnflattenDenseTensorsOp::RunOnDevice() {
  const Tensor& buffer = Input(0);
  const TypeMeta& meta = CommonMeta(*this, 0);
  int64_t total = 0;
  for (int i = 1; i < InputSize(); ++i) total += Input(i).numel();
  C2_ENFORCE(buffer.numel() == total, "buffer has ", buffer.numel(), " elements but the ",
             InputSize() - 1, " tensors hold ", total);
  const char* src = static_cast<const char*>(buffer.raw_data());
  for (int i = 1; i < InputSize(); ++i) {
    Tensor* X = Output(i - 1);
    void* dst = X->raw_mutable_data(meta);
    CopyBytes(X->nbytes(), src, buffer.device(), dst, X->device());
    src += X->nbytes();
  }
  return true;
}

REGISTER_CPU_OPERATOR(FlattenDenseTensors, FlattenDenseTensorsOp);
OPERATOR_SCHEMA(FlattenDenseTensors)
    .NumInputs(1, std::numeric_limits<int>::max())
    .NumOutputs(1)
    .TensorInference([](const OperatorDef&, const std::vector<TensorShape>& in) {
      TensorShape out;
      out.set_data_type(in[0].data_type());
      int64_t total = 0;
      for (const TensorShape& s : in) {
        int64_t n = 1;
        for (int d = 0; d < s.dims_size(); ++d) n *= s.dims(d);
        total += n;
      }
      out.add_dims(total);
      return std::vector<TensorShape>{out};
    })
    .Input(0, "X1..Xk", "Dense tensors of one fixed-size dtype")
    .Output(0, "buffer", "1-D: the elements of X1, then X2, ... (storage reused across runs)")
    .SetDoc("Packs several tensors into one contiguous 1-D buffer (gradient bucketing).");
REGISTER_GRADIENT(FlattenDenseTensors, ShouldNotDoGradient);

REGISTER_CPU_OPERATOR(UnflattenDenseTensors, UnflattenDenseTensorsOp);
OPERATOR_SCHEMA(UnflattenDenseTensors)
    .NumInputsOutputs([](int in, int out) { return in >= 2 && out == in - 1; })
    .EnforceInplace([](int in, int out) { return in == out + 1; })
    .TensorInference([](const OperatorDef&, const std::vector<TensorShape>& in) {
      return std::vector<TensorShape>(in.begin() + 1, in.end());
    })
    .Input(0, "buffer", "1-D buffer made by FlattenDenseTensors from tensors shaped like X1..Xk")
    .Input(1, "X1..Xk", "The tensors to refill (shapes are kept)")
    .Output(0, "X1..Xk", "Same blobs as inputs 1..k, holding consecutive chunks of buffer")
    .SetDoc(
        "Copies the consecutive chunks of a flat buffer back into tensors (gradient bucketing).");
REGISTER_GRADIENT(UnflattenDenseTensors, ShouldNotDoGradient);

}  // namespace caffe2
