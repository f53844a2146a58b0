// Segment reductions over consecutive rows (spec ops §1.3). LENGTHS (int32, 1-D) cuts the rows into
// segments; OUTPUT has one row per segment: dims (len(LENGTHS),) + DATA.dims[1:], float.
//   LengthsSum          [DATA, LENGTHS]                   sum of the segment's rows
//   LengthsMean         [DATA, LENGTHS]                   their mean (0 for an empty segment)
//   LengthsWeightedSum  [DATA, SCALARS, LENGTHS]          sum of SCALARS[r] * DATA[r]
//   SparseLengthsSum    [DATA, INDICES, LENGTHS]          rows DATA[INDICES[r]] instead of DATA[r]
//   SparseLengthsMean   [DATA, INDICES, LENGTHS]
//   SparseLengthsWeightedSum [DATA, WEIGHTS, INDICES, LENGTHS]
// Gradients (rows of dDATA, one per position r, from the dY row of r's segment):
//   LengthsSum         -> LengthsIndicesInGradientSumGradient [dY, LENGTHS, DATA] -> [dDATA]
//   LengthsMean        -> LengthsMeanGradient [dY, LENGTHS] -> [dDATA]
//   LengthsWeightedSum -> LengthsWeightedSumGradient [dY, SCALARS, LENGTHS] -> [dDATA]
//                         (no gradient for SCALARS)
//   SparseLengths{Sum,Mean} -> SparseLengthsIndicesInGradient{Sum,Mean}Gradient
//                         [dY, LENGTHS, INDICES] -> values of the slice (INDICES, values) for DATA
//   SparseLengthsWeightedSum -> SparseLengthsIndicesInGradientWeightedSumGradient
//                         [dY, WEIGHTS, LENGTHS, INDICES] -> slice values (no gradient for WEIGHTS)
#include "core/gradient.h"
#include "operators/index/lengths_reducer_op.h"
#include "operators/tensor/tensor_util.h"

namespace caffe2 {
namespace {

using Reduce = LengthsReduce;

template <Reduce kReduce, bool kSparse>
class LengthsReducerOp final : public Operator<CPUContext> {
 public:
  using Operator<CPUContext>::Operator;
  bool RunOnDevice() override {
    const int weighted = kReduce == Reduce::kWeightedSum ? 1 : 0;
    const Tensor& data = Input(0);
    CheckLengthsData(data);
    const std::vector<int64_t> lengths = LengthsValues(Input(InputSize() - 1));
    const int64_t n = LengthsTotal(lengths);
    std::vector<int64_t> rows;
    if (kSparse) {
      rows = IntValues(Input(1 + weighted), "INDICES");
      CheckLengthsIndexCount(n, static_cast<int64_t>(rows.size()));
      for (size_t i = 0; i < rows.size(); ++i) CheckLengthsIndex(rows[i], i, data);
    } else {
      CheckLengthsDataRows(n, data);
    }
    const float* w = nullptr;
    if (weighted) {
      CheckLengthsWeights(Input(1), n, kSparse ? "WEIGHTS" : "SCALARS");
      w = this->Input(1).template data<float>();
    }
    std::vector<int64_t> dims = data.dims();
    dims[0] = static_cast<int64_t>(lengths.size());
    Tensor* out = Output(0);
    out->Resize(dims);
    const int64_t block = data.size_from_dim(1);
    const float* x = data.data<float>();
    float* y = out->mutable_data<float>();
    std::fill(y, y + out->numel(), 0.f);
    int64_t pos = 0;
    for (size_t s = 0; s < lengths.size(); ++s) {
      float* ys = y + s * block;
      for (int64_t j = 0; j < lengths[s]; ++j, ++pos) {
        const float* xr = x + (kSparse ? rows[pos] : pos) * block;
        const float scale = w ? w[pos] : 1.f;
        for (int64_t k = 0; k < block; ++k) ys[k] += scale * xr[k];
      }
      if (kReduce == Reduce::kMean && lengths[s] > 0) {
        for (int64_t k = 0; k < block; ++k) ys[k] /= static_cast<float>(lengths[s]);
      }
    }
    return true;
  }
};

// One output row per segment position: dY[segment] scaled by 1, 1/length or the position's weight.
// Inputs: [dY, WEIGHTS?, LENGTHS, (DATA or INDICES)?], `kLengthsAt` the index of LENGTHS.
template <Reduce kReduce, int kLengthsAt>
class LengthsReducerGradientOp final : public Operator<CPUContext> {
 public:
  using Operator<CPUContext>::Operator;
  bool RunOnDevice() override {
    const Tensor& dY = Input(0);
    CheckLengthsGradOutput(dY);
    const std::vector<int64_t> lengths = LengthsValues(Input(kLengthsAt));
    CheckLengthsGradSegments(dY, static_cast<int64_t>(lengths.size()));
    const int64_t n = LengthsTotal(lengths);
    if (InputSize() > kLengthsAt + 1) CheckLengthsGradRows(Input(kLengthsAt + 1), n);
    const float* w = nullptr;
    if (kReduce == Reduce::kWeightedSum) {
      CheckLengthsWeights(Input(1), n, "weights");
      w = this->Input(1).template data<float>();
    }
    std::vector<int64_t> dims = dY.dims();
    dims[0] = n;
    Tensor* dX = Output(0);
    dX->Resize(dims);
    const int64_t block = dY.size_from_dim(1);
    const float* g = dY.data<float>();
    float* dx = dX->mutable_data<float>();
    int64_t pos = 0;
    for (size_t s = 0; s < lengths.size(); ++s) {
      const float* gs = g + s * block;
      for (int64_t j = 0; j < lengths[s]; ++j, ++pos) {
        const float scale = w ? w[pos] : kReduce == Reduce::kMean ? 1.f / lengths[s] : 1.f;
        for (int64_t k = 0; k < block; ++k) dx[pos * block + k] = scale * gs[k];
      }
    }
    return true;
  }
};

template <Reduce kReduce>
class GetLengthsGradient final : public GradientMakerBase {
  using GradientMakerBase::GradientMakerBase;
  std::vector<OperatorDef> GetGradientDefs() override {
    switch (kReduce) {
      case Reduce::kSum:
        return SingleGradientDef("LengthsIndicesInGradientSumGradient", "", {GO(0), I(1), I(0)},
                                 {GI(0)});
      case Reduce::kMean:
        return SingleGradientDef("LengthsMeanGradient", "", {GO(0), I(1)}, {GI(0)});
      default:
        return SingleGradientDef("LengthsWeightedSumGradient", "", {GO(0), I(1), I(2)}, {GI(0)});
    }
  }
};

template <Reduce kReduce>
class GetSparseLengthsGradient final : public GradientMakerBase {
  using GradientMakerBase::GradientMakerBase;
  std::vector<OperatorDef> GetGradientDefs() override {
    const std::string values = GI_V(0);
    std::vector<OperatorDef> ops;
    if (kReduce == Reduce::kWeightedSum) {
      ops = SingleGradientDef("SparseLengthsIndicesInGradientWeightedSumGradient", "",
                              {GO(0), I(1), I(3), I(2)}, {values});
      SetSparse(0, I(2), values);
    } else {
      ops =
          SingleGradientDef(kReduce == Reduce::kSum ? "SparseLengthsIndicesInGradientSumGradient"
                                                    : "SparseLengthsIndicesInGradientMeanGradient",
                            "", {GO(0), I(2), I(1)}, {values});
      SetSparse(0, I(1), values);
    }
    return ops;
  }
};

std::vector<TensorShape> LengthsInference(const OperatorDef& def,
                                          const std::vector<TensorShape>& in) {
  TensorShape out = in[0];
  if (out.dims_size() > 0) out.set_dims(0, in.back().dims_size() > 0 ? in.back().dims(0) : 0);
  return {out};
}

}  // namespace

REGISTER_CPU_OPERATOR(LengthsSum, LengthsReducerOp<Reduce::kSum, false>);
REGISTER_CPU_OPERATOR(LengthsMean, LengthsReducerOp<Reduce::kMean, false>);
REGISTER_CPU_OPERATOR(LengthsWeightedSum, LengthsReducerOp<Reduce::kWeightedSum, false>);
REGISTER_CPU_OPERATOR(SparseLengthsSum, LengthsReducerOp<Reduce::kSum, true>);
REGISTER_CPU_OPERATOR(SparseLengthsMean, LengthsReducerOp<Reduce::kMean, true>);
REGISTER_CPU_OPERATOR(SparseLengthsWeightedSum, LengthsReducerOp<Reduce::kWeightedSum, true>);
OPERATOR_SCHEMA(LengthsSum)
    .NumInputs(2)
    .NumOutputs(1)
    .TensorInference(LengthsInference)
    .SetDoc("Sums segments of consecutive rows.");
OPERATOR_SCHEMA(LengthsMean)
    .NumInputs(2)
    .NumOutputs(1)
    .TensorInference(LengthsInference)
    .SetDoc("Averages segments of consecutive rows.");
OPERATOR_SCHEMA(LengthsWeightedSum)
    .NumInputs(3)
    .NumOutputs(1)
    .TensorInference(LengthsInference)
    .SetDoc("Weighted sums of segments of consecutive rows.");
OPERATOR_SCHEMA(SparseLengthsSum)
    .NumInputs(3)
    .NumOutputs(1)
    .TensorInference(LengthsInference)
    .SetDoc("Sums segments of rows picked by INDICES.");
OPERATOR_SCHEMA(SparseLengthsMean)
    .NumInputs(3)
    .NumOutputs(1)
    .TensorInference(LengthsInference)
    .SetDoc("Averages segments of rows picked by INDICES.");
OPERATOR_SCHEMA(SparseLengthsWeightedSum)
    .NumInputs(4)
    .NumOutputs(1)
    .TensorInference(LengthsInference)
    .SetDoc("Weighted sums of segments of rows picked by INDICES.");
REGISTER_GRADIENT(LengthsSum, GetLengthsGradient<Reduce::kSum>);
REGISTER_GRADIENT(LengthsMean, GetLengthsGradient<Reduce::kMean>);
REGISTER_GRADIENT(LengthsWeightedSum, GetLengthsGradient<Reduce::kWeightedSum>);
REGISTER_GRADIENT(SparseLengthsSum, GetSparseLengthsGradient<Reduce::kSum>);
REGISTER_GRADIENT(SparseLengthsMean, GetSparseLengthsGradient<Reduce::kMean>);
REGISTER_GRADIENT(SparseLengthsWeightedSum, GetSparseLengthsGradient<Reduce::kWeightedSum>);

REGISTER_CPU_OPERATOR(LengthsIndicesInGradientSumGradient,
                      LengthsReducerGradientOp<Reduce::kSum, 1>);
REGISTER_CPU_OPERATOR(LengthsMeanGradient, LengthsReducerGradientOp<Reduce::kMean, 1>);
REGISTER_CPU_OPERATOR(LengthsWeightedSumGradient,
                      LengthsReducerGradientOp<Reduce::kWeightedSum, 2>);
REGISTER_CPU_OPERATOR(SparseLengthsIndicesInGradientSumGradient,
                      LengthsReducerGradientOp<Reduce::kSum, 1>);
REGISTER_CPU_OPERATOR(SparseLengthsIndicesInGradientMeanGradient,
                      LengthsReducerGradientOp<Reduce::kMean, 1>);
REGISTER_CPU_OPERATOR(SparseLengthsIndicesInGradientWeightedSumGradient,
                      LengthsReducerGradientOp<Reduce::kWeightedSum, 2>);
OPERATOR_SCHEMA(LengthsIndicesInGradientSumGradient).NumInputs(2, 3).NumOutputs(1);
OPERATOR_SCHEMA(LengthsMeanGradient).NumInputs(2, 3).NumOutputs(1);
OPERATOR_SCHEMA(LengthsWeightedSumGradient).NumInputs(3, 4).NumOutputs(1);
OPERATOR_SCHEMA(SparseLengthsIndicesInGradientSumGradient).NumInputs(3).NumOutputs(1);
OPERATOR_SCHEMA(SparseLengthsIndicesInGradientMeanGradient).NumInputs(3).NumOutputs(1);
OPERATOR_SCHEMA(SparseLengthsIndicesInGradientWeightedSumGradient).NumInputs(4).NumOutputs(1);

}  // namespace caffe2
