#include "operators/fill/structured_fill_op.h"

#include <algorithm>

#include "core/gpu_fallback_declarations.h"
#include "core/gradient.h"
#include "operators/tensor/tensor_util.h"

namespace caffe2 {

void RangeFillOp::Fill(Tensor* out) {
  float* data = out->mutable_data<float>();
  for (int64_t i = 0; i < out->numel(); ++i) data[i] = static_cast<float>(i);
}

DiagonalFillOp::DiagonalFillOp(const OperatorDef& def, Workspace* ws) : FillerOp(def, ws) {
  const Argument* value = ArgumentHelper(def).Find("value");
  if (HasArgument("dtype")) {
    dtype_ = static_cast<DataType>(GetSingleArgument<int>("dtype", 1));
  } else if (value && value->has_i()) {
    dtype_ = DataType::INT64;
  }
  if (value) value_ = value->has_i() ? static_cast<double>(value->i()) : value->f();
  TypeMeta::FromDataType(dtype_);
}

void DiagonalFillOp::Fill(Tensor* out) {
  C2_ENFORCE(out->ndim() >= 2, "DiagonalFill needs at least 2 dims, got ",
             Tensor::DimsString(out->dims()));
  if (out->ndim() > 2) {
    for (int i = 1; i < out->ndim(); ++i) {
      C2_ENFORCE(out->dim(i) == out->dim(0),
                 "DiagonalFill with more than 2 dims needs equal dims, got ",
                 Tensor::DimsString(out->dims()));
    }
  }
  switch (dtype_) {
    case DataType::FLOAT:
      return FillTyped<float>(out, static_cast<float>(value_));
    case DataType::DOUBLE:
      return FillTyped<double>(out, value_);
    case DataType::INT32:
      return FillTyped<int32_t>(out, static_cast<int32_t>(value_));
    case DataType::INT64:
      return FillTyped<int64_t>(out, static_cast<int64_t>(value_));
    case DataType::BOOL:
      return FillTyped<bool>(out, value_ != 0);
    default:
      C2_THROW("DiagonalFill does not support dtype ", DataTypeName(dtype_));
  }
}

template <class T>
void DiagonalFillOp::FillTyped(Tensor* out, T value) {
  T* data = out->mutable_data<T>();
  std::fill(data, data + out->numel(), T(0));
  int64_t step = 0, stride = 1;
  for (int i = out->ndim() - 1; i >= 0; --i) {
    step += stride;
    stride *= out->dim(i);
  }
  int64_t diag = out->dim(0);
  for (int i = 1; i < out->ndim(); ++i) diag = std::min(diag, out->dim(i));
  for (int64_t i = 0; i < diag; ++i) data[i * step] = value;
}

namespace {

// LengthsRangeFill: [lengths (int32, 1-D)] -> [range_sequence (int32)], the ranges 0..l-1 of every
// length, concatenated. NO_GRADIENT.
class LengthsRangeFillOp final : public Operator<CPUContext> {
 public:
  using Operator<CPUContext>::Operator;
  bool RunOnDevice() override {
    const Tensor& lengths = Input(0);
    C2_ENFORCE(lengths.ndim() == 1 && lengths.IsType<int32_t>(),
               "lengths must be a 1-D int32 tensor, got ", lengths.DebugString());
    const int32_t* l = lengths.data<int32_t>();
    int64_t total = 0;
    for (int64_t i = 0; i < lengths.numel(); ++i) {
      C2_ENFORCE(l[i] >= 0, "length ", i, " is negative: ", l[i]);
      total += l[i];
    }
    Tensor* out = Output(0);
    out->Resize(total);
    int32_t* o = out->mutable_data<int32_t>();
    for (int64_t i = 0; i < lengths.numel(); ++i) {
      for (int32_t j = 0; j < l[i]; ++j) *o++ = j;
    }
    return true;
  }
};

std::vector<TensorShape> DiagonalInference(const OperatorDef& def,
                                           const std::vector<TensorShape>& in) {
  std::vector<TensorShape> out = FillerTensorInference(def, in);
  ArgumentHelper args(def);
  const Argument* value = args.Find("value");
  if (!args.HasArgument("dtype") && value && value->has_i())
    out[0].set_data_type(TensorProto::INT64);
  return out;
}

}  // namespace

REGISTER_CPU_OPERATOR(RangeFill, RangeFillOp);
REGISTER_CPU_OPERATOR(DiagonalFill, DiagonalFillOp);
REGISTER_CPU_OPERATOR(LengthsRangeFill, LengthsRangeFillOp);
REGISTER_GPU_FALLBACK(LengthsRangeFill);  // CUDA runs the CPU kernel

OPERATOR_SCHEMA(RangeFill)
    .NumInputs(0, 1)
    .NumOutputs(1)
    .AllowInplace({{0, 0}})
    .TensorInference(FillerTensorInference)
    .SetDoc("Fills with 0, 1, 2, ... as floats.");
OPERATOR_SCHEMA(DiagonalFill)
    .NumInputs(0, 1)
    .NumOutputs(1)
    .AllowInplace({{0, 0}})
    .TensorInference(DiagonalInference)
    .Arg("value", "Diagonal value")
    .Arg("dtype", "Element type")
    .SetDoc("Zeros with `value` on the main diagonal.");
OPERATOR_SCHEMA(LengthsRangeFill)
    .NumInputs(1)
    .NumOutputs(1)
    .TensorInference([](const OperatorDef&, const std::vector<TensorShape>& in) {
      // 1-D of sum(lengths): a runtime value; the type is int32.
      TensorShape out;
      out.set_data_type(TensorProto::INT32);
      out.set_unknown_shape(true);
      return std::vector<TensorShape>{out};
    })
    .SetDoc("Concatenated ranges 0..l-1 for every length l.");

// The shape arguments of FillerOp (filler_op.h).
static OpSchema& c2_range_fill_args [[maybe_unused]] = AddFillerArgs(c2_op_schema_RangeFill);
static OpSchema& c2_diagonal_fill_args [[maybe_unused]] = AddFillerArgs(c2_op_schema_DiagonalFill);

REGISTER_GRADIENT(RangeFill, NoGradient);
REGISTER_GRADIENT(DiagonalFill, NoGradient);
REGISTER_GRADIENT(LengthsRangeFill, NoGradient);

}  // namespace caffe2
