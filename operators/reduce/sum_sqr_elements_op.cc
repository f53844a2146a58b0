// SumSqrElements: [X] -> [sum], the sum of squares of all elements as a 0-d tensor, divided by
// X.numel() when `average` (bool, false); float, double. No gradient is registered (spec ops
// §1.2.17: gradient clipping only reads it).
#include "core/operator.h"
#include "operators/common/blocked_sum.h"
#include "operators/common/elementwise_cpu.h"
#include "operators/reduce/sum_elements_op.h"

namespace caffe2 {
namespace {

class SumSqrElementsOp final : public Operator<CPUContext> {
 public:
  using Operator<CPUContext>::Operator;
  bool RunOnDevice() override {
    const Tensor& X = Input(0);
    const bool average = GetSingleArgument<bool>("average", false);
    CheckSumElementsAverage(X, average);
    const bool ok = DispatchType(X.meta(), FloatTypes{}, [&](auto tag) {
      using T = typename decltype(tag)::type;
      const T* x = X.template data<T>();
      const double sum = BlockedSum(x, X.numel(), [](const auto& b) { return b.square().sum(); });
      Tensor* Y = Output(0);
      Y->Resize(std::vector<int64_t>{});
      Y->template mutable_data<T>()[0] = static_cast<T>(average ? sum / X.numel() : sum);
    });
    C2_ENFORCE(ok, "unsupported type ", X.meta().name, " (supported: float, double)");
    return true;
  }
};

}  // namespace

REGISTER_CPU_OPERATOR(SumSqrElements, SumSqrElementsOp);
OPERATOR_SCHEMA(SumSqrElements)
    .NumInputs(1)
    .NumOutputs(1)
    .TensorInference([](const OperatorDef&, const std::vector<TensorShape>& in) {
      TensorShape out;
      out.set_data_type(in.at(0).data_type());
      return std::vector<TensorShape>{out};
    })
    .SetDoc("The sum (or with average=1 the mean) of the squares of all elements, as a 0-d tensor.")
    .Arg("average", "bool, default false: divide by the number of elements");

}  // namespace caffe2
