// SumElements: [X] -> [sum], the sum of all elements as a 0-d tensor, divided by X.numel() when
// `average` (bool, false); float.
// SumElementsGradient: [X, dSum] -> [dX], every element dSum (divided by numel when `average`).
// SumElementsInt: [X int32] -> [sum], the int32 sum of all elements as a 0-d tensor (wrapping as
// int32 arithmetic does); no gradient.
#include "core/gpu_fallback_declarations.h"
#include "core/gradient.h"
#include "core/operator.h"
#include "operators/common/blocked_sum.h"
#include "operators/reduce/sum_elements_op.h"

namespace caffe2 {
namespace {

class SumElementsOp final : public Operator<CPUContext> {
 public:
  using Operator<CPUContext>::Operator;
  bool RunOnDevice() override {
    const Tensor& X = Input(0);
    C2_ENFORCE(X.IsType<float>(), "unsupported type ", X.meta().name, " (supported: float)");
    const bool average = GetSingleArgument<bool>("average", false);
    CheckSumElementsAverage(X, average);
    const double sum =
        BlockedSum(X.data<float>(), X.numel(), [](const auto& b) { return b.sum(); });
    Tensor* Y = Output(0);
    Y->Resize(std::vector<int64_t>{});
    Y->mutable_data<float>()[0] = static_cast<float>(average ? sum / X.numel() : sum);
    return true;
  }
};

class SumElementsGradientOp final : public Operator<CPUContext> {
 public:
  using Operator<CPUContext>::Operator;
  bool RunOnDevice() override {
    const Tensor& X = Input(0);
    const Tensor& dY = Input(1);
    CheckSumElementsGradient(dY);
    float g = dY.data<float>()[0];
    if (GetSingleArgument<bool>("average", false)) g /= static_cast<float>(X.numel());
    Tensor* dX = Output(0);
    dX->Resize(X.dims());
    float* dx = dX->mutable_data<float>();
    for (int64_t i = 0; i < X.numel(); ++i) dx[i] = g;
    return true;
  }
};

class SumElementsIntOp final : public Operator<CPUContext> {
 public:
  using Operator<CPUContext>::Operator;
  bool RunOnDevice() override {
    const Tensor& X = Input(0);
    C2_ENFORCE(X.IsType<int32_t>(), "unsupported type ", X.meta().name, " (supported: int)");
    const int32_t* x = X.data<int32_t>();
    uint32_t sum = 0;  // unsigned: the int32 wrap-around without undefined behaviour
    for (int64_t i = 0; i < X.numel(); ++i) sum += static_cast<uint32_t>(x[i]);
    Tensor* Y = Output(0);
    Y->Resize(std::vector<int64_t>{});
    Y->mutable_data<int32_t>()[0] = static_cast<int32_t>(sum);
    return true;
  }
};

class GetSumElementsGradient final : public GradientMakerBase {
  using GradientMakerBase::GradientMakerBase;
  std::vector<OperatorDef> GetGradientDefs() override {
    return SingleGradientDef("SumElementsGradient", "", {I(0), GO(0)}, {GI(0)});
  }
};

}  // namespace

REGISTER_CPU_OPERATOR(SumElements, SumElementsOp);
OPERATOR_SCHEMA(SumElements)
    .NumInputs(1)
    .NumOutputs(1)
    .ScalarType(TensorProto::FLOAT)
    .SetDoc("The sum (or with average=1 the mean) of all elements, as a 0-d tensor.")
    .Arg("average", "bool, default false: divide by the number of elements");
REGISTER_GRADIENT(SumElements, GetSumElementsGradient);
REGISTER_CPU_OPERATOR(SumElementsGradient, SumElementsGradientOp);
OPERATOR_SCHEMA(SumElementsGradient)
    .NumInputs(2)
    .NumOutputs(1)
    .SetDoc("The gradient of SumElements: [X, dSum] -> [dX], every element dSum.")
    .Arg("average", "(bool, default 0) 1: every element gets dSum / numel (the forward op's mean)");

REGISTER_CPU_OPERATOR(SumElementsInt, SumElementsIntOp);
REGISTER_GPU_FALLBACK(SumElementsInt);  // CUDA runs the CPU kernel
OPERATOR_SCHEMA(SumElementsInt)
    .NumInputs(1)
    .NumOutputs(1)
    .ScalarType(TensorProto::INT32)
    .Input(0, "X", "int32 tensor")
    .Output(0, "sum", "the int32 sum of all elements, 0-d")
    .SetDoc("The sum of all elements of an int32 tensor, as a 0-d int32 tensor.");
REGISTER_GRADIENT(SumElementsInt, ShouldNotDoGradient);

}  // namespace caffe2
