// Shape: [X] -> [dims], a 1-D int64 tensor of X's dims; SHOULD_NOT_DO_GRADIENT.
// Size:  [X] -> [n], a 0-d int64 tensor holding X's element count; NO_GRADIENT.
#include "core/gpu_fallback_declarations.h"
#include "core/gradient.h"
#include "core/operator.h"

namespace caffe2 {
namespace {

class ShapeOp final : public Operator<CPUContext> {
 public:
  using Operator<CPUContext>::Operator;
  bool RunOnDevice() override {
    const Tensor& X = Input(0);
    Tensor* Y = Output(0);
    Y->Resize(X.ndim());
    int64_t* y = Y->mutable_data<int64_t>();
    for (int i = 0; i < X.ndim(); ++i) y[i] = X.dim(i);
    return true;
  }
};

class SizeOp final : public Operator<CPUContext> {
 public:
  using Operator<CPUContext>::Operator;
  bool RunOnDevice() override {
    const int64_t n = Input(0).numel();
    Tensor* Y = Output(0);
    Y->Resize(std::vector<int64_t>{});
    Y->mutable_data<int64_t>()[0] = n;
    return true;
  }
};

}  // namespace

REGISTER_CPU_OPERATOR(Shape, ShapeOp);
REGISTER_GPU_FALLBACK(Shape);  // CUDA runs the CPU kernel
OPERATOR_SCHEMA(Shape)
    .NumInputs(1)
    .NumOutputs(1)
    .TensorInference([](const OperatorDef&, const std::vector<TensorShape>& in) {
      TensorShape out;
      out.set_data_type(TensorProto::INT64);
      out.add_dims(in[0].dims_size());
      return std::vector<TensorShape>{out};
    })
    .SetDoc("The dims of a tensor as a 1-D int64 tensor.");
REGISTER_GRADIENT(Shape, ShouldNotDoGradient);

REGISTER_CPU_OPERATOR(Size, SizeOp);
REGISTER_GPU_FALLBACK(Size);  // CUDA runs the CPU kernel
OPERATOR_SCHEMA(Size)
    .NumInputs(1)
    .NumOutputs(1)
    .ScalarType(TensorProto::INT64)
    .SetDoc("The element count of a tensor as a 0-d int64 tensor.");
REGISTER_GRADIENT(Size, NoGradient);

}  // namespace caffe2
