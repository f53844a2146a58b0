// ReduceFrontSum / ReduceFrontMean / ReduceBackSum / ReduceBackMean: [X, lengths?] -> [Y].
// `num_reduce_dim` (int, 1) leading (Front) or trailing (Back) dims of X are reduced; X is viewed
// as (rows, cols) with the reduced dims as rows (Front) or as cols (Back).
//   Front: Y has dims X.dims[num_reduce_dim:], Y[j] = sum_{i < len_j} X[i, j]
//   Back:  Y has dims X.dims[:ndim - num_reduce_dim], Y[i] = sum_{j < len_i} X[i, j]
// The optional int32 `lengths` (one per output element, each within the reduced size) limits the
// reduction to a prefix; without it the whole reduced extent counts. Mean divides by that count
// (a zero length gives 0; an empty reduced extent without lengths is an error). float.
// Gradients Reduce{Front,Back}{Sum,Mean}Gradient: [dY, X, lengths?] -> [dX], dY spread over the
// counted elements (divided by the count for Mean), 0 elsewhere.
#include "core/gradient.h"
#include "core/operator.h"
#include "operators/reduce/reduce_front_back.h"

namespace caffe2 {
namespace {

// The number of counted elements for each output element.
std::vector<int64_t> Counts(const OperatorBase& op, int lengths_index, const ReduceView& v,
                            bool front) {
  const int64_t outer = front ? v.cols : v.rows;
  const int64_t extent = front ? v.rows : v.cols;
  std::vector<int64_t> counts(outer, extent);
  if (op.InputSize() <= lengths_index) return counts;
  const Tensor& L = op.Input(lengths_index);
  C2_ENFORCE(L.IsType<int32_t>(), "lengths must be int32, got ", L.meta().name);
  C2_ENFORCE(L.numel() == outer, "lengths has ", L.numel(), " elements but the output has ", outer);
  const int32_t* l = L.data<int32_t>();
  for (int64_t k = 0; k < outer; ++k) {
    C2_ENFORCE(l[k] >= 0 && l[k] <= extent, "lengths[", k, "] = ", l[k], " is outside [0, ", extent,
               "]");
    counts[k] = l[k];
  }
  return counts;
}

template <bool kFront, bool kMean>
class ReduceFrontBackOp final : public Operator<CPUContext> {
 public:
  using Operator<CPUContext>::Operator;
  bool RunOnDevice() override {
    const Tensor& X = Input(0);
    CheckReduceFrontBackInput(X);
    const ReduceView v = MakeReduceView(X, GetSingleArgument<int>("num_reduce_dim", 1), kFront);
    const std::vector<int64_t> counts = Counts(*this, 1, v, kFront);
    const int64_t extent = kFront ? v.rows : v.cols;
    C2_ENFORCE(!kMean || extent > 0 || InputSize() > 1 || counts.empty(), "X ",
               Tensor::DimsString(X.dims()),
               " reduces an empty extent: the mean of 0 elements is undefined (the Sum reduction "
               "gives 0; with "
               "lengths, a zero length gives 0)");
    const float* x = X.data<float>();
    Tensor* Y = Output(0);
    Y->Resize(v.out_dims);
    float* y = Y->mutable_data<float>();
    if (kFront) {
      for (int64_t j = 0; j < v.cols; ++j) y[j] = 0.f;
      for (int64_t i = 0; i < v.rows; ++i) {
        const float* xi = x + i * v.cols;
        for (int64_t j = 0; j < v.cols; ++j) {
          if (i < counts[j]) y[j] += xi[j];
        }
      }
    } else {
      for (int64_t i = 0; i < v.rows; ++i) {
        const float* xi = x + i * v.cols;
        float acc = 0.f;
        for (int64_t j = 0; j < counts[i]; ++j) acc += xi[j];
        y[i] = acc;
      }
    }
    if (kMean) {
      for (size_t k = 0; k < counts.size(); ++k) y[k] = counts[k] ? y[k] / counts[k] : 0.f;
    }
    return true;
  }
};

template <bool kFront, bool kMean>
class ReduceFrontBackGradientOp final : public Operator<CPUContext> {
 public:
  using Operator<CPUContext>::Operator;
  bool RunOnDevice() override {
    const Tensor& dY = Input(0);
    const Tensor& X = Input(1);
    const ReduceView v = MakeReduceView(X, GetSingleArgument<int>("num_reduce_dim", 1), kFront);
    CheckReduceFrontBackGradient(dY, v);
    const std::vector<int64_t> counts = Counts(*this, 2, v, kFront);
    const float* dy = dY.data<float>();
    Tensor* dX = Output(0);
    dX->Resize(X.dims());
    float* dx = dX->mutable_data<float>();
    for (int64_t i = 0; i < v.rows; ++i) {
      for (int64_t j = 0; j < v.cols; ++j) {
        const int64_t k = kFront ? j : i;
        const int64_t pos = kFront ? i : j;
        float g = pos < counts[k] ? dy[k] : 0.f;
        if (kMean && counts[k]) g /= static_cast<float>(counts[k]);
        dx[i * v.cols + j] = g;
      }
    }
    return true;
  }
};

class GetReduceFrontBackGradient final : public GradientMakerBase {
  using GradientMakerBase::GradientMakerBase;
  std::vector<OperatorDef> GetGradientDefs() override {
    std::vector<std::string> inputs{GO(0), I(0)};
    if (Def().input_size() == 2) inputs.push_back(I(1));
    return SingleGradientDef(Def().type() + "Gradient", "", inputs, {GI(0)});
  }
};

std::vector<TensorShape> InferReduceFrontBack(bool front, const OperatorDef& def,
                                              const std::vector<TensorShape>& in) {
  const int num = ArgumentHelper(def).GetSingleArgument<int>("num_reduce_dim", 1);
  const int nd = in.at(0).dims_size();
  C2_ENFORCE(num >= 0 && num <= nd, "num_reduce_dim ", num, " out of range for a ", nd, "-d input");
  TensorShape out;
  out.set_data_type(in.at(0).data_type());
  const int begin = front ? num : 0, end = front ? nd : nd - num;
  for (int i = begin; i < end; ++i) out.add_dims(in.at(0).dims(i));
  return {out};
}

}  // namespace

REGISTER_CPU_OPERATOR(ReduceFrontSum, ReduceFrontBackOp<true, false>);
REGISTER_CPU_OPERATOR(ReduceFrontMean, ReduceFrontBackOp<true, true>);
REGISTER_CPU_OPERATOR(ReduceBackSum, ReduceFrontBackOp<false, false>);
REGISTER_CPU_OPERATOR(ReduceBackMean, ReduceFrontBackOp<false, true>);
REGISTER_CPU_OPERATOR(ReduceFrontSumGradient, ReduceFrontBackGradientOp<true, false>);
REGISTER_CPU_OPERATOR(ReduceFrontMeanGradient, ReduceFrontBackGradientOp<true, true>);
REGISTER_CPU_OPERATOR(ReduceBackSumGradient, ReduceFrontBackGradientOp<false, false>);
REGISTER_CPU_OPERATOR(ReduceBackMeanGradient, ReduceFrontBackGradientOp<false, true>);

OPERATOR_SCHEMA(ReduceFrontSum)
    .NumInputs(1, 2)
    .NumOutputs(1)
    .TensorInference([](const OperatorDef& d, const std::vector<TensorShape>& in) {
      return InferReduceFrontBack(true, d, in);
    })
    .SetDoc("Sum over the first num_reduce_dim dims (a per-column prefix with lengths).")
    .Arg("num_reduce_dim", "(int, default 1) how many leading dims of X are reduced");
OPERATOR_SCHEMA(ReduceFrontMean)
    .NumInputs(1, 2)
    .NumOutputs(1)
    .TensorInference([](const OperatorDef& d, const std::vector<TensorShape>& in) {
      return InferReduceFrontBack(true, d, in);
    })
    .SetDoc("Mean over the first num_reduce_dim dims (a per-column prefix with lengths).")
    .Arg("num_reduce_dim", "(int, default 1) how many leading dims of X are reduced");
OPERATOR_SCHEMA(ReduceBackSum)
    .NumInputs(1, 2)
    .NumOutputs(1)
    .TensorInference([](const OperatorDef& d, const std::vector<TensorShape>& in) {
      return InferReduceFrontBack(false, d, in);
    })
    .SetDoc("Sum over the last num_reduce_dim dims (a per-row prefix with lengths).")
    .Arg("num_reduce_dim", "(int, default 1) how many trailing dims of X are reduced");
OPERATOR_SCHEMA(ReduceBackMean)
    .NumInputs(1, 2)
    .NumOutputs(1)
    .TensorInference([](const OperatorDef& d, const std::vector<TensorShape>& in) {
      return InferReduceFrontBack(false, d, in);
    })
    .SetDoc("Mean over the last num_reduce_dim dims (a per-row prefix with lengths).")
    .Arg("num_reduce_dim", "(int, default 1) how many trailing dims of X are reduced");
OPERATOR_SCHEMA(ReduceFrontSumGradient)
    .NumInputs(2, 3)
    .NumOutputs(1)
    .SetDoc("The gradient of ReduceFrontSum: [dY, X, lengths?] -> [dX].")
    .Arg("num_reduce_dim", "(int, default 1) the forward op's count of reduced leading dims");
OPERATOR_SCHEMA(ReduceFrontMeanGradient)
    .NumInputs(2, 3)
    .NumOutputs(1)
    .SetDoc("The gradient of ReduceFrontMean: [dY, X, lengths?] -> [dX].")
    .Arg("num_reduce_dim", "(int, default 1) the forward op's count of reduced leading dims");
OPERATOR_SCHEMA(ReduceBackSumGradient)
    .NumInputs(2, 3)
    .NumOutputs(1)
    .SetDoc("The gradient of ReduceBackSum: [dY, X, lengths?] -> [dX].")
    .Arg("num_reduce_dim", "(int, default 1) the forward op's count of reduced trailing dims");
OPERATOR_SCHEMA(ReduceBackMeanGradient)
    .NumInputs(2, 3)
    .NumOutputs(1)
    .SetDoc("The gradient of ReduceBackMean: [dY, X, lengths?] -> [dX].")
    .Arg("num_reduce_dim", "(int, default 1) the forward op's count of reduced trailing dims");

REGISTER_GRADIENT(ReduceFrontSum, GetReduceFrontBackGradient);
REGISTER_GRADIENT(ReduceFrontMean, GetReduceFrontBackGradient);
REGISTER_GRADIENT(ReduceBackSum, GetReduceFrontBackGradient);
REGISTER_GRADIENT(ReduceBackMean, GetReduceFrontBackGradient);

}  // namespace caffe2
