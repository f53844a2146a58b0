// Range: [stop] or [start, stop] or [start, stop, step] (one-element tensors of one type: int32,
// int64, float or double) -> [output], the 1-d values start, start + step, ... short of stop, as
// numpy.arange: ceil((stop - start) / step) values, none when that is not positive. step 0 is an
// error. No gradient. (Upstream counted one value short for a negative integer step, e.g. 3 for
// (10, 0, -3); here it is numpy's 4: 10, 7, 4, 1.)
#include <cmath>

#include "core/gpu_fallback_declarations.h"
#include "core/gradient.h"
#include "core/operator.h"
#include "operators/common/elementwise_cpu.h"

namespace caffe2 {
namespace {

using RangeTypes = TypeList<int32_t, int64_t, float, double>;

template <class T>
int64_t RangeLength(T start, T stop, T step) {
  if constexpr (std::is_integral_v<T>) {
    const int64_t diff = static_cast<int64_t>(stop) - start;
    if (step > 0) return diff <= 0 ? 0 : (diff + step - 1) / step;
    return diff >= 0 ? 0 : (diff + step + 1) / step;
  } else {
    const double n = std::ceil((static_cast<double>(stop) - start) / step);
    return n > 0 ? static_cast<int64_t>(n) : 0;
  }
}

class RangeOp final : public Operator<CPUContext> {
 public:
  using Operator<CPUContext>::Operator;
  bool RunOnDevice() override {
    const Tensor& first = Input(0);
    const bool ok = DispatchType(first.meta(), RangeTypes{}, [&](auto tag) {
      using T = typename decltype(tag)::type;
      T value[3] = {T(0), T(0), T(1)};  // start, stop, step
      const int n = InputSize();
      for (int i = 0; i < n; ++i) {
        const Tensor& in = Input(i);
        C2_ENFORCE(in.numel() == 1 && in.meta() == first.meta(), "input ", i,
                   " must be a one-element ", first.meta().name, " tensor like input 0, got ",
                   in.DebugString());
        value[n == 1 ? 1 : i] = in.template data<T>()[0];
      }
      const T start = value[0], stop = value[1], step = value[2];
      C2_ENFORCE(step != T(0), "step must not be 0");
      const int64_t len = RangeLength(start, stop, step);
      Tensor* out = Output(0);
      out->Resize(len);
      T* o = out->template mutable_data<T>();
      for (int64_t i = 0; i < len; ++i) o[i] = static_cast<T>(start + i * step);
    });
    C2_ENFORCE(ok, "unsupported type ", first.meta().name, " (supported: ", TypeNames(RangeTypes{}),
               ")");
    return true;
  }
};

}  // namespace

REGISTER_CPU_OPERATOR(Range, RangeOp);
REGISTER_GPU_FALLBACK(Range);  // CUDA runs the CPU kernel
OPERATOR_SCHEMA(Range)
    .NumInputs(1, 3)
    .NumOutputs(1)
    .TensorInference([](const OperatorDef&, const std::vector<TensorShape>& in) {
      TensorShape out;  // the length is a runtime value
      out.set_data_type(in.at(0).data_type());
      out.set_unknown_shape(true);
      return std::vector<TensorShape>{out};
    })
    .Input(0, "start", "one-element tensor: stop when it is the only input, else start")
    .Input(1, "stop", "one-element tensor, excluded from the range")
    .Input(2, "step", "one-element tensor, not 0 (default 1)")
    .Output(0, "output", "1-d tensor of the inputs' type")
    .SetDoc("The values from start up to (excluding) stop by step, as numpy.arange.");
REGISTER_GRADIENT(Range, NoGradient);

}  // namespace caffe2
