// FloatToFused8BitRowwiseQuantized: [input (N, D) float] -> [output (N, D + 8) uint8], every row
// quantized with its own scale and bias (the layout in fused_8bit_rowwise.h).
// Fused8BitRowwiseQuantizedToFloat: [input (N, D + 8) uint8] -> [output (N, D) float], q * scale +
// bias per row. No gradients (as upstream: the quantized tables are for inference).
#include <algorithm>
#include <cmath>

#include "core/gpu_fallback_declarations.h"
#include "core/gradient.h"
#include "core/operator.h"
#include "operators/cast/fused_8bit_rowwise.h"

namespace caffe2 {
namespace {

class FloatToFused8BitRowwiseQuantizedOp final : public Operator<CPUContext> {
 public:
  using Operator<CPUContext>::Operator;
  bool RunOnDevice() override {
    const Tensor& X = Input(0);
    C2_ENFORCE(X.IsType<float>() && X.ndim() == 2, "input must be a 2-d float tensor, got ",
               X.DebugString());
    const int64_t N = X.dim(0), D = X.dim(1);
    Tensor* Y = Output(0);
    Y->Resize(N, D + kFused8BitRowExtraBytes);
    const float* x = X.data<float>();
    uint8_t* y = Y->mutable_data<uint8_t>();
    for (int64_t i = 0; i < N; ++i) {
      const float* row = x + i * D;
      uint8_t* out = y + i * (D + kFused8BitRowExtraBytes);
      float lo = 0.f, hi = 0.f;
      if (D > 0) {
        const auto mm = std::minmax_element(row, row + D);
        lo = *mm.first;
        hi = *mm.second;
      }
      const float range = hi - lo;
      const float inverse_scale = 255.f / (range + 1e-8f);
      for (int64_t j = 0; j < D; ++j)
        out[j] = static_cast<uint8_t>(std::lrintf((row[j] - lo) * inverse_scale));
      const float scale = range / 255.f;
      std::memcpy(out + D, &scale, sizeof(float));
      std::memcpy(out + D + sizeof(float), &lo, sizeof(float));
    }
    return true;
  }
};

class Fused8BitRowwiseQuantizedToFloatOp final : public Operator<CPUContext> {
 public:
  using Operator<CPUContext>::Operator;
  bool RunOnDevice() override {
    const Tensor& X = Input(0);
    const int64_t D = CheckFused8BitRowwiseData(X, "input");
    const int64_t N = X.dim(0);
    Tensor* Y = Output(0);
    Y->Resize(N, D);
    const uint8_t* x = X.data<uint8_t>();
    float* y = Y->mutable_data<float>();
    for (int64_t i = 0; i < N; ++i) {
      const uint8_t* row = x + i * (D + kFused8BitRowExtraBytes);
      const Fused8BitRowScale s = ReadFused8BitRowScale(row, D);
      for (int64_t j = 0; j < D; ++j) y[i * D + j] = row[j] * s.scale + s.bias;
    }
    return true;
  }
};

std::vector<TensorShape> FusedShape(const std::vector<TensorShape>& in, int64_t extra,
                                    TensorProto::DataType type) {
  TensorShape out;
  out.set_data_type(type);
  if (in.at(0).dims_size() != 2) {
    out.set_unknown_shape(true);
  } else {
    out.add_dims(in[0].dims(0));
    out.add_dims(in[0].dims(1) + extra);
  }
  return {out};
}

}  // namespace

REGISTER_CPU_OPERATOR(FloatToFused8BitRowwiseQuantized, FloatToFused8BitRowwiseQuantizedOp);
REGISTER_GPU_FALLBACK(FloatToFused8BitRowwiseQuantized);  // CUDA runs the CPU kernel
OPERATOR_SCHEMA(FloatToFused8BitRowwiseQuantized)
    .NumInputs(1)
    .NumOutputs(1)
    .TensorInference([](const OperatorDef&, const std::vector<TensorShape>& in) {
      return FusedShape(in, kFused8BitRowExtraBytes, TensorProto::UINT8);
    })
    .Input(0, "input", "(N, D) float")
    .Output(0, "output", "(N, D + 8) uint8: each row's values, then its scale and bias")
    .SetDoc("Quantizes each row to 8 bits with its own float scale and bias, stored in the row.");
REGISTER_GRADIENT(FloatToFused8BitRowwiseQuantized, NoGradient);

REGISTER_CPU_OPERATOR(Fused8BitRowwiseQuantizedToFloat, Fused8BitRowwiseQuantizedToFloatOp);
REGISTER_GPU_FALLBACK(Fused8BitRowwiseQuantizedToFloat);  // CUDA runs the CPU kernel
OPERATOR_SCHEMA(Fused8BitRowwiseQuantizedToFloat)
    .NumInputs(1)
    .NumOutputs(1)
    .TensorInference([](const OperatorDef&, const std::vector<TensorShape>& in) {
      return FusedShape(in, -kFused8BitRowExtraBytes, TensorProto::FLOAT);
    })
    .Input(0, "input", "(N, D + 8) uint8 fused rows")
    .Output(0, "output", "(N, D) float")
    .SetDoc("Dequantizes fused 8-bit rows: q * scale + bias.");
REGISTER_GRADIENT(Fused8BitRowwiseQuantizedToFloat, NoGradient);

}  // namespace caffe2
