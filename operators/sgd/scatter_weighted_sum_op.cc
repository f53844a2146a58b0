// ScatterWeightedSum: [X0, w0, indices, slices1, w1, slices2, w2, ...] -> [X0] (enforce 0->0).
// For each position k of indices, row r = indices[k] of X0 becomes
//   w0 * X0[r] + sum_j w_j * slices_j[k]
// (rows repeated in indices are updated once per occurrence, in order). X0 and slices are float;
// each w is a one-element float tensor; slices_j holds one X0 row per index.
// SHOULD_NOT_DO_GRADIENT.
#include "core/gradient.h"
#include "operators/sgd/sgd_util.h"

namespace caffe2 {
namespace {

class ScatterWeightedSumOp final : public Operator<CPUContext> {
 public:
  using Operator<CPUContext>::Operator;
  bool RunOnDevice() override {
    CheckScatterInputCount(InputSize());
    Tensor* X = Output(0);
    CheckScatterTarget(*X);
    CheckScatterWeight(Input(1), 1);
    const float w0 = Input(1).data<float>()[0];
    const std::vector<int64_t> rows = SparseRows(Input(2), X->dim(0));
    const int64_t block = X->size_from_dim(1);
    std::vector<const float*> slices;
    std::vector<float> weights;
    for (int i = 3; i < InputSize(); i += 2) {
      const Tensor& s = Input(i);
      CheckScatterSlices(s, i, static_cast<int64_t>(rows.size()), block);
      slices.push_back(s.data<float>());
      CheckScatterWeight(Input(i + 1), i + 1);
      weights.push_back(Input(i + 1).data<float>()[0]);
    }
    float* x = X->mutable_data<float>();
    for (size_t k = 0; k < rows.size(); ++k) {
      float* row = x + rows[k] * block;
      for (int64_t j = 0; j < block; ++j) {
        float v = w0 * row[j];
        for (size_t s = 0; s < slices.size(); ++s) v += weights[s] * slices[s][k * block + j];
        row[j] = v;
      }
    }
    return true;
  }
};

}  // namespace

REGISTER_CPU_OPERATOR(ScatterWeightedSum, ScatterWeightedSumOp);
OPERATOR_SCHEMA(ScatterWeightedSum)
    .NumInputs([] {
      std::set<int> odd;
      for (int i = 5; i <= 255; i += 2) odd.insert(i);
      return odd;
    }())
    .NumOutputs(1)
    .EnforceInplace({{0, 0}})
    .SetDoc("X0[indices] = w0 * X0[indices] + sum_j w_j * slices_j, in place.");
REGISTER_GRADIENT(ScatterWeightedSum, ShouldNotDoGradient);

}  // namespace caffe2
