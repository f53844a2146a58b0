// Mean: [X0, X1, ...] -> [Y], the elementwise mean of inputs of one shape; float, double; Y may
// be X0.
// MeanGradient: [dY] -> [dX0, dX1, ...], each dY / n; dX0 may overwrite dY.
#include "core/gradient.h"
#include "operators/common/elementwise_op_base.h"

namespace caffe2 {
namespace {

class MeanOp final : public Operator<CPUContext> {
 public:
  using Operator<CPUContext>::Operator;
  bool RunOnDevice() override {
    const Tensor& X0 = Input(0);
    CheckSameShapeAndType(*this, 0);
    const bool ok = DispatchType(X0.meta(), FloatTypes{}, [&](auto tag) {
      using T = typename decltype(tag)::type;
      std::vector<const T*> xs;
      for (int i = 0; i < InputSize(); ++i) xs.push_back(Input(i).template data<T>());
      Tensor* Y = Output(0);
      Y->Resize(X0.dims());
      T* y = Y->template mutable_data<T>();
      const T inv = T(1) / static_cast<T>(InputSize());
      for (int64_t k = 0; k < X0.numel(); ++k) {
        T acc = xs[0][k];
        for (size_t i = 1; i < xs.size(); ++i) acc += xs[i][k];
        y[k] = acc * inv;
      }
    });
    C2_ENFORCE(ok, "unsupported type ", X0.meta().name, " (supported: float, double)");
    return true;
  }
};

class MeanGradientOp final : public Operator<CPUContext> {
 public:
  using Operator<CPUContext>::Operator;
  bool RunOnDevice() override {
    const Tensor& dY = Input(0);
    const bool ok = DispatchType(dY.meta(), FloatTypes{}, [&](auto tag) {
      using T = typename decltype(tag)::type;
      const T scale = T(1) / static_cast<T>(OutputSize());
      // Output 0 may alias dY, so it is written last.
      for (int i = OutputSize() - 1; i >= 0; --i) {
        const T* dy = dY.template data<T>();
        Tensor* dX = Output(i);
        dX->Resize(dY.dims());
        UnaryLoop(dY.numel(), dy, dX->template mutable_data<T>(), functors::Scale{float(scale)});
      }
    });
    C2_ENFORCE(ok, "unsupported type ", dY.meta().name, " (supported: float, double)");
    return true;
  }
};

class GetMeanGradient final : public GradientMakerBase {
  using GradientMakerBase::GradientMakerBase;
  std::vector<OperatorDef> GetGradientDefs() override {
    std::vector<std::string> grads;
    for (int i = 0; i < Def().input_size(); ++i) grads.push_back(GI(i));
    return SingleGradientDef("MeanGradient", "", {GO(0)}, grads);
  }
};

}  // namespace

REGISTER_CPU_OPERATOR(Mean, MeanOp);
OPERATOR_SCHEMA(Mean)
    .NumInputs(1, OpSchema::kInf)
    .NumOutputs(1)
    .AllowInplace({{0, 0}})
    .IdenticalTypeAndShapeOfInput(0)
    .SetDoc("Elementwise mean of the inputs, which must share shape and type.");
REGISTER_GRADIENT(Mean, GetMeanGradient);
REGISTER_CPU_OPERATOR(MeanGradient, MeanGradientOp);
OPERATOR_SCHEMA(MeanGradient).NumInputs(1).NumOutputs(1, OpSchema::kInf).AllowInplace({{0, 0}});

}  // namespace caffe2
