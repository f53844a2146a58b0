// NanCheck: [X, ...] -> [Y] (spec ops, "NanCheck"): Y = X when every value of X is finite;
// otherwise an error naming the blob, the first non-finite value and its index, and how many there
// are (upstream printed them and returned false). The extra inputs are upstream's context for its
// printout and are not checked. float or double; Y may be X. Gradient: NanCheck of dY into dX, so
// a non-finite gradient is caught on the way back too. CUDA runs this CPU kernel.
#include <cmath>
#include <cstdint>

#include "core/gpu_fallback_declarations.h"
#include "core/gradient.h"
#include "core/operator.h"
#include "operators/common/elementwise_cpu.h"

namespace caffe2 {
namespace {

class NanCheckOp final : public Operator<CPUContext> {
 public:
  using Operator<CPUContext>::Operator;
  bool RunOnDevice() override {
    const Tensor& X = Input(0);
    const bool ok = DispatchType(X.meta(), FloatTypes{}, [&](auto tag) {
      using T = typename decltype(tag)::type;
      const T* x = X.template data<T>();
      int64_t bad = 0, first = -1;
      for (int64_t i = 0; i < X.numel(); ++i) {
        if (std::isfinite(x[i])) continue;
        if (first < 0) first = i;
        ++bad;
      }
      C2_ENFORCE(bad == 0, "blob '", debug_def().input(0), "' ", Tensor::DimsString(X.dims()),
                 " holds ", bad, " NaN or infinite value(s), the first ", x[first],
                 " at flat index ", first);
    });
    C2_ENFORCE(ok, "unsupported type ", X.meta().name, " (supported: float, double)");
    if (!IsInputOutputAlias(0, 0)) Output(0)->CopyFrom(X);
    return true;
  }
};

class GetNanCheckGradient final : public GradientMakerBase {
  using GradientMakerBase::GradientMakerBase;
  std::vector<OperatorDef> GetGradientDefs() override {
    return SingleGradientDef("NanCheck", "", {GO(0)}, {GI(0)});
  }
};

}  // namespace

REGISTER_CPU_OPERATOR(NanCheck, NanCheckOp);
REGISTER_GPU_FALLBACK(NanCheck);  // CUDA runs the CPU kernel
OPERATOR_SCHEMA(NanCheck)
    .NumInputs(1, OpSchema::kInf)
    .NumOutputs(1)
    .AllowInplace({{0, 0}})
    .IdenticalTypeAndShapeOfInput(0)
    .SetDoc("Identity that fails when input 0 holds a NaN or an infinity, naming where.")
    .Input(0, "X", "the tensor to check")
    .Output(0, "Y", "X, unchanged");
REGISTER_GRADIENT(NanCheck, GetNanCheckGradient);

}  // namespace caffe2
