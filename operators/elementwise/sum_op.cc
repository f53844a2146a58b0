// Sum: [X0, X1, ...] -> [Y], the elementwise sum of inputs of one shape and type (float, double,
// int32, int64). Y may be X0 (accumulate in place). The gradient passes dY to every input.
#include "core/gradient.h"
#include "core/operator.h"
#include "operators/common/elementwise_checks.h"
#include "operators/common/parallel_for.h"

namespace caffe2 {
namespace {

class SumOp final : public Operator<CPUContext> {
 public:
  using Operator<CPUContext>::Operator;
  bool RunOnDevice() override {
    const Tensor& x0 = Input(0);
    switch (x0.dtype()) {
      case DataType::FLOAT:
        return Compute<float>();
      case DataType::DOUBLE:
        return Compute<double>();
      case DataType::INT32:
        return Compute<int32_t>();
      case DataType::INT64:
        return Compute<int64_t>();
      default:
        C2_THROW("unsupported input type ", x0.meta().name, " (float, double, int32, int64)");
    }
  }

 private:
  template <class T>
  bool Compute() {
    const Tensor& x0 = Input(0);
    for (int i = 1; i < InputSize(); ++i) {
      const Tensor& xi = Input(i);
      CheckSumInput(*this, i);
      C2_ENFORCE(xi.device().type == kCPU, "input ", i, " lives on ", DeviceString(xi.device()));
    }
    Tensor* y = Output(0);
    const int64_t n = x0.numel();
    if (!IsInputOutputAlias(0, 0)) {
      y->Resize(x0.dims());
      T* out = y->mutable_data<T>();
      const T* a = x0.data<T>();
      if (InputSize() == 1) {
        std::copy(a, a + n, out);
        return true;
      }
      const T* b = Input(1).data<T>();
      ParallelFor(n, ElementWorkers(n, n), [&](int64_t begin, int64_t end, int) {
        for (int64_t k = begin; k < end; ++k) out[k] = a[k] + b[k];
      });
      AccumulateFrom<T>(2, out, n);
    } else {
      AccumulateFrom<T>(1, y->mutable_data<T>(), n);
    }
    return true;
  }

  template <class T>
  void AccumulateFrom(int first, T* out, int64_t n) {
    for (int i = first; i < InputSize(); ++i) {
      const T* x = Input(i).data<T>();
      ParallelFor(n, ElementWorkers(n, n), [&](int64_t begin, int64_t end, int) {
        for (int64_t k = begin; k < end; ++k) out[k] += x[k];
      });
    }
  }
};

class GetSumGradient final : public GradientMakerBase {
  using GradientMakerBase::GradientMakerBase;
  std::vector<OperatorDef> GetGradientDefs() override {
    for (int i = 0; i < Def().input_size(); ++i) SetDense(i, GO(0));
    return {};
  }
};

}  // namespace

REGISTER_CPU_OPERATOR(Sum, SumOp);
OPERATOR_SCHEMA(Sum)
    .NumInputs(1, OpSchema::kInf)
    .NumOutputs(1)
    .AllowInplace({{0, 0}})
    .IdenticalTypeAndShapeOfInput(0)
    .CostInference([](const OperatorDef& def, const std::vector<TensorShape>& in) {
      OpSchema::Cost c;
      uint64_t n = 1;
      for (int64_t d : in.at(0).dims()) n *= static_cast<uint64_t>(d);
      c.flops = n * (in.size() - 1);
      c.bytes_moved = n * sizeof(float) * (in.size() + 1);
      return c;
    })
    .SetDoc("Elementwise sum of the inputs, which must share shape and type.")
    .Input(0, "data_0", "First of the tensors to add")
    .Output(0, "sum", "Their sum");
REGISTER_GRADIENT(Sum, GetSumGradient);

}  // namespace caffe2
