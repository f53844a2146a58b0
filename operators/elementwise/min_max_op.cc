// Max / Min: [X0, X1, ...] -> [Y], the elementwise max / min of inputs of one shape; float types;
// Y may be X0 (spec ops §1.2.17, §1.3).
// MaxGradient / MinGradient: [Y, dY, X0, X1, ...] -> [dX0, dX1, ...], dXi = dY where Xi == Y,
// else 0 (every input that attains the extremum receives the gradient). dX0 may overwrite dY.
#include "core/gradient.h"
#include "operators/common/elementwise_op_base.h"

namespace caffe2 {
namespace {

template <bool kMax>
class MinMaxOp final : public Operator<CPUContext> {
 public:
  using Operator<CPUContext>::Operator;
  bool RunOnDevice() override {
    CheckSameShapeAndType(*this, 0);
    const Tensor& X0 = Input(0);
    const bool ok = DispatchType(X0.meta(), FloatTypes{}, [&](auto tag) {
      using T = typename decltype(tag)::type;
      std::vector<const T*> xs;
      for (int i = 0; i < InputSize(); ++i) xs.push_back(Input(i).template data<T>());
      Tensor* Y = Output(0);
      Y->Resize(X0.dims());
      T* y = Y->template mutable_data<T>();
      for (int64_t k = 0; k < X0.numel(); ++k) {
        T v = xs[0][k];
        for (size_t i = 1; i < xs.size(); ++i) {
          const T w = xs[i][k];
          v = kMax ? (w > v ? w : v) : (w < v ? w : v);
        }
        y[k] = v;
      }
    });
    C2_ENFORCE(ok, "unsupported type ", X0.meta().name, " (supported: float, double)");
    return true;
  }
};

class MinMaxGradientOp final : public Operator<CPUContext> {
 public:
  using Operator<CPUContext>::Operator;
  bool RunOnDevice() override {
    CheckSameShapeAndType(*this, 0);
    const Tensor& Y = Input(0);
    const bool ok = DispatchType(Y.meta(), FloatTypes{}, [&](auto tag) {
      using T = typename decltype(tag)::type;
      const T* y = Y.template data<T>();
      const T* dy = Input(1).template data<T>();
      // dX0 may overwrite dY (in-place forward), so it is written last.
      for (int i = OutputSize() - 1; i >= 0; --i) {
        const T* x = Input(i + 2).template data<T>();
        Tensor* dX = Output(i);
        dX->Resize(Y.dims());
        T* dx = dX->template mutable_data<T>();
        for (int64_t k = 0; k < Y.numel(); ++k) dx[k] = x[k] == y[k] ? dy[k] : T(0);
      }
    });
    C2_ENFORCE(ok, "unsupported type ", Y.meta().name, " (supported: float, double)");
    return true;
  }
};

class GetMinMaxGradient final : public GradientMakerBase {
  using GradientMakerBase::GradientMakerBase;
  std::vector<OperatorDef> GetGradientDefs() override {
    std::vector<std::string> inputs{O(0), GO(0)};
    std::vector<std::string> grads;
    for (int i = 0; i < Def().input_size(); ++i) {
      inputs.push_back(I(i));
      grads.push_back(GI(i));
    }
    return SingleGradientDef(Def().type() + "Gradient", "", inputs, grads);
  }
};

}  // namespace

REGISTER_CPU_OPERATOR(Max, MinMaxOp<true>);
OPERATOR_SCHEMA(Max)
    .NumInputs(1, OpSchema::kInf)
    .NumOutputs(1)
    .AllowInplace({{0, 0}})
    .IdenticalTypeAndShapeOfInput(0)
    .SetDoc("Elementwise max of the inputs, which must share shape and type.");
REGISTER_GRADIENT(Max, GetMinMaxGradient);
REGISTER_CPU_OPERATOR(MaxGradient, MinMaxGradientOp);
OPERATOR_SCHEMA(MaxGradient)
    .NumInputs(3, OpSchema::kInf)
    .NumOutputs(1, OpSchema::kInf)
    .AllowInplace({{1, 0}});

REGISTER_CPU_OPERATOR(Min, MinMaxOp<false>);
OPERATOR_SCHEMA(Min)
    .NumInputs(1, OpSchema::kInf)
    .NumOutputs(1)
    .AllowInplace({{0, 0}})
    .IdenticalTypeAndShapeOfInput(0)
    .SetDoc("Elementwise min of the inputs, which must share shape and type.");
REGISTER_GRADIENT(Min, GetMinMaxGradient);
REGISTER_CPU_OPERATOR(MinGradient, MinMaxGradientOp);
OPERATOR_SCHEMA(MinGradient)
    .NumInputs(3, OpSchema::kInf)
    .NumOutputs(1, OpSchema::kInf)
    .AllowInplace({{1, 0}});

}  // namespace caffe2
