// Accuracy: [prediction (N, D) float, label (N) int32] -> [accuracy] (0-d float) (spec ops §1.2.6).
// The fraction of rows whose label ranks among the top_k (default 1) scores. Ranking is stable:
// class j outranks the label l when pred[j] > pred[l], or pred[j] == pred[l] and j < l.
// No gradient.
#include "core/gradient.h"
#include "core/operator.h"
#include "operators/loss/accuracy_op.h"

namespace caffe2 {
namespace {

class AccuracyOp final : public Operator<CPUContext> {
 public:
  AccuracyOp(const OperatorDef& def, Workspace* ws)
      : Operator<CPUContext>(def, ws), top_k_(ReadAccuracyTopK(*this)) {}

  bool RunOnDevice() override {
    const Tensor& P = Input(0);
    const Tensor& L = Input(1);
    const AccuracyShape s = CheckAccuracyInputs(P, L, top_k_);
    const int64_t N = s.N, D = s.D;
    const float* p = P.data<float>();
    const int* l = L.data<int>();
    int64_t correct = 0;
    for (int64_t i = 0; i < N; ++i) {
      const int label = l[i];
      const float* row = p + i * D;
      const float v = row[label];
      int64_t better = 0;
      for (int64_t j = 0; j < D && better < top_k_; ++j) {
        if (row[j] > v || (row[j] == v && j < label)) ++better;
      }
      if (better < top_k_) ++correct;
    }
    Tensor* A = Output(0);
    A->Resize(std::vector<int64_t>{});
    A->mutable_data<float>()[0] =
        N > 0 ? static_cast<float>(correct) / static_cast<float>(N) : 0.0f;
    return true;
  }

 private:
  int top_k_;
};

}  // namespace

REGISTER_CPU_OPERATOR(Accuracy, AccuracyOp);
OPERATOR_SCHEMA(Accuracy)
    .NumInputs(2)
    .NumOutputs(1)
    .ScalarType(TensorProto::FLOAT)
    .Arg("top_k", "a row counts as correct when its label is among the top_k scores (default 1)")
    .SetDoc(
        "Fraction of rows whose label is among the top_k predictions; ties favour the lower class "
        "index.")
    .Input(0, "prediction", "Scores (N, D)")
    .Input(1, "label", "int32 class ids (N)")
    .Output(0, "accuracy", "Scalar accuracy");
REGISTER_GRADIENT(Accuracy, ShouldNotDoGradient);

}  // namespace caffe2
