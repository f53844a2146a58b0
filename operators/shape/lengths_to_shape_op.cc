// LengthsToShape: [lengths (1-d int32, all equal)] -> [shape (2) int32] = (len(lengths), the common
// length): the shape of the dense matrix the segments form. An empty lengths gives (0, 0).
// No gradient.
#include "core/gpu_fallback_declarations.h"
#include "core/gradient.h"
#include "core/operator.h"

namespace caffe2 {
namespace {

class LengthsToShapeOp final : public Operator<CPUContext> {
 public:
  using Operator<CPUContext>::Operator;
  bool RunOnDevice() override {
    const Tensor& lengths = Input(0);
    C2_ENFORCE(lengths.ndim() == 1 && lengths.IsType<int32_t>(),
               "lengths must be a 1-d int32 tensor, got ", lengths.DebugString());
    const int32_t* len = lengths.data<int32_t>();
    const int64_t n = lengths.numel();
    for (int64_t i = 1; i < n; ++i) {
      C2_ENFORCE(len[i] == len[0], "all lengths must be equal: lengths[0] is ", len[0],
                 " but lengths[", i, "] is ", len[i]);
    }
    Tensor* out = Output(0);
    out->Resize(2);
    int32_t* o = out->mutable_data<int32_t>();
    o[0] = static_cast<int32_t>(n);
    o[1] = n == 0 ? 0 : len[0];
    return true;
  }
};

}  // namespace

REGISTER_CPU_OPERATOR(LengthsToShape, LengthsToShapeOp);
REGISTER_GPU_FALLBACK(LengthsToShape);  // CUDA runs the CPU kernel
OPERATOR_SCHEMA(LengthsToShape)
    .NumInputs(1)
    .NumOutputs(1)
    .TensorInference([](const OperatorDef&, const std::vector<TensorShape>&) {
      TensorShape out;
      out.set_data_type(TensorProto::INT32);
      out.add_dims(2);
      return std::vector<TensorShape>{out};
    })
    .Input(0, "lengths", "1-d int32, every entry the same")
    .Output(0, "shape", "int32 (len(lengths), lengths[0])")
    .SetDoc("The 2-d shape of segments of equal length.");
REGISTER_GRADIENT(LengthsToShape, NoGradient);

}  // namespace caffe2
