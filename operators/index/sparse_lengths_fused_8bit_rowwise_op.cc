// The sparse lengths reductions over a table of fused 8-bit rows (operators/cast/
// fused_8bit_rowwise.h): each INDICES entry picks a row, dequantized as q * scale + bias.
// SparseLengthsSumFused8BitRowwise: [DATA (N, D + 8) uint8, INDICES (int32/int64), LENGTHS (int32)]
//   -> [OUTPUT (len(LENGTHS), D) float], the sum of each segment's rows.
// SparseLengthsMeanFused8BitRowwise: the same, divided by the length (an empty segment is 0).
// SparseLengthsWeightedSumFused8BitRowwise: [DATA, WEIGHTS (float, one per index), INDICES,
//   LENGTHS] -> the weighted sum.
// The input checks and messages are those of SparseLengthsSum (lengths_reducer_op.h). No gradients
// (as upstream: the quantized tables are for inference).
#include <algorithm>

#include "core/gpu_fallback_declarations.h"
#include "core/gradient.h"
#include "operators/cast/fused_8bit_rowwise.h"
#include "operators/index/lengths_reducer_op.h"
#include "operators/tensor/tensor_util.h"

namespace caffe2 {
namespace {

template <LengthsReduce kReduce>
class SparseLengthsFused8BitRowwiseOp final : public Operator<CPUContext> {
 public:
  using Operator<CPUContext>::Operator;
  bool RunOnDevice() override {
    constexpr int weighted = kReduce == LengthsReduce::kWeightedSum ? 1 : 0;
    const Tensor& data = Input(0);
    const int64_t D = CheckFused8BitRowwiseData(data, "DATA");
    const std::vector<int64_t> lengths = LengthsValues(Input(2 + weighted));
    const std::vector<int64_t> rows = IntValues(Input(1 + weighted), "INDICES");
    const int64_t n = LengthsTotal(lengths);
    CheckLengthsIndexCount(n, static_cast<int64_t>(rows.size()));
    for (size_t i = 0; i < rows.size(); ++i) CheckLengthsIndex(rows[i], i, data);
    const float* w = nullptr;
    if (weighted) {
      CheckLengthsWeights(Input(1), n, "WEIGHTS");
      w = Input(1).template data<float>();
    }
    Tensor* out = Output(0);
    out->Resize(static_cast<int64_t>(lengths.size()), D);
    float* y = out->mutable_data<float>();
    std::fill(y, y + out->numel(), 0.f);
    const uint8_t* table = data.data<uint8_t>();
    const int64_t stride = D + kFused8BitRowExtraBytes;
    int64_t pos = 0;
    for (size_t s = 0; s < lengths.size(); ++s) {
      float* ys = y + s * D;
      for (int64_t j = 0; j < lengths[s]; ++j, ++pos) {
        const uint8_t* row = table + rows[pos] * stride;
        const Fused8BitRowScale rs = ReadFused8BitRowScale(row, D);
        const float weight = w ? w[pos] : 1.f;
        const float scale = weight * rs.scale, bias = weight * rs.bias;
        for (int64_t k = 0; k < D; ++k) ys[k] += scale * row[k] + bias;
      }
      if (kReduce == LengthsReduce::kMean && lengths[s] > 0) {
        for (int64_t k = 0; k < D; ++k) ys[k] /= static_cast<float>(lengths[s]);
      }
    }
    return true;
  }
};

std::vector<TensorShape> FusedReductionShape(const OperatorDef&,
                                             const std::vector<TensorShape>& in) {
  TensorShape out;
  out.set_data_type(TensorProto::FLOAT);
  const TensorShape& lengths = in.back();
  if (in.at(0).dims_size() != 2 || lengths.dims_size() != 1) {
    out.set_unknown_shape(true);
  } else {
    out.add_dims(lengths.dims(0));
    out.add_dims(in[0].dims(1) - kFused8BitRowExtraBytes);
  }
  return {out};
}

}  // namespace

REGISTER_CPU_OPERATOR(SparseLengthsSumFused8BitRowwise,
                      SparseLengthsFused8BitRowwiseOp<LengthsReduce::kSum>);
REGISTER_GPU_FALLBACK(SparseLengthsSumFused8BitRowwise);  // CUDA runs the CPU kernel
OPERATOR_SCHEMA(SparseLengthsSumFused8BitRowwise)
    .NumInputs(3)
    .NumOutputs(1)
    .TensorInference(FusedReductionShape)
    .Input(0, "DATA", "(N, D + 8) uint8 fused rows")
    .Input(1, "INDICES", "int32/int64 rows of DATA, segment after segment")
    .Input(2, "LENGTHS", "int32 indices per segment")
    .Output(0, "OUTPUT", "(len(LENGTHS), D) float")
    .SetDoc("Sums the dequantized rows of each segment of a fused 8-bit table.");
REGISTER_GRADIENT(SparseLengthsSumFused8BitRowwise, NoGradient);

REGISTER_CPU_OPERATOR(SparseLengthsMeanFused8BitRowwise,
                      SparseLengthsFused8BitRowwiseOp<LengthsReduce::kMean>);
REGISTER_GPU_FALLBACK(SparseLengthsMeanFused8BitRowwise);  // CUDA runs the CPU kernel
OPERATOR_SCHEMA(SparseLengthsMeanFused8BitRowwise)
    .NumInputs(3)
    .NumOutputs(1)
    .TensorInference(FusedReductionShape)
    .Input(0, "DATA", "(N, D + 8) uint8 fused rows")
    .Input(1, "INDICES", "int32/int64 rows of DATA, segment after segment")
    .Input(2, "LENGTHS", "int32 indices per segment")
    .Output(0, "OUTPUT", "(len(LENGTHS), D) float")
    .SetDoc("Averages the dequantized rows of each segment of a fused 8-bit table.");
REGISTER_GRADIENT(SparseLengthsMeanFused8BitRowwise, NoGradient);

REGISTER_CPU_OPERATOR(SparseLengthsWeightedSumFused8BitRowwise,
                      SparseLengthsFused8BitRowwiseOp<LengthsReduce::kWeightedSum>);
REGISTER_GPU_FALLBACK(SparseLengthsWeightedSumFused8BitRowwise);  // CUDA runs the CPU kernel
OPERATOR_SCHEMA(SparseLengthsWeightedSumFused8BitRowwise)
    .NumInputs(4)
    .NumOutputs(1)
    .TensorInference(FusedReductionShape)
    .Input(0, "DATA", "(N, D + 8) uint8 fused rows")
    .Input(1, "WEIGHTS", "float, one per index")
    .Input(2, "INDICES", "int32/int64 rows of DATA, segment after segment")
    .Input(3, "LENGTHS", "int32 indices per segment")
    .Output(0, "OUTPUT", "(len(LENGTHS), D) float")
    .SetDoc("Weighted sums of the dequantized rows of each segment of a fused 8-bit table.");
REGISTER_GRADIENT(SparseLengthsWeightedSumFused8BitRowwise, NoGradient);

}  // namespace caffe2
