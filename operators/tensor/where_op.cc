// Where: schema and the CPU kernel (contract in where_op.h).
#include "operators/tensor/where_op.h"

#include "core/gradient.h"

namespace caffe2 {
namespace {

class WhereOp final : public Operator<CPUContext> {
 public:
  WhereOp(const OperatorDef& def, Workspace* ws)
      : Operator<CPUContext>(def, ws),
        on_rows_(GetSingleArgument<bool>("broadcast_on_rows", false)) {}

  bool RunOnDevice() override {
    const Tensor& C = Input(0);
    const Tensor& X = Input(1);
    const Tensor& Y = Input(2);
    const int64_t block = WhereBlock(C, X, Y, on_rows_);
    const TypeMeta& meta = X.meta();
    Tensor* Z = Output(0);
    // Z may be X or Y: every element is read from one input and written to the same position.
    if (!IsInputOutputAlias(1, 0) && !IsInputOutputAlias(2, 0)) Z->Resize(X.dims());
    char* z = static_cast<char*>(Z->raw_mutable_data(meta));
    const char* x = static_cast<const char*>(X.raw_data());
    const char* y = static_cast<const char*>(Y.raw_data());
    const bool* c = C.data<bool>();
    const size_t item = meta.itemsize;
    for (int64_t i = 0; i < X.numel(); ++i) {
      const char* src = c[i / block] ? x : y;
      if (src + i * item != z + i * item) CopyItems(meta, 1, src + i * item, z + i * item);
    }
    return true;
  }

 private:
  bool on_rows_;
};

}  // namespace

REGISTER_CPU_OPERATOR(Where, WhereOp);
OPERATOR_SCHEMA(Where)
    .NumInputs(3)
    .NumOutputs(1)
    .AllowInplace({{1, 0}, {2, 0}})
    .IdenticalTypeAndShapeOfInput(1)
    .Arg("broadcast_on_rows", "C holds one value per row of X")
    .SetDoc("Picks elements of X where C is true and of Y elsewhere.");
REGISTER_GRADIENT(Where, ShouldNotDoGradient);

}  // namespace caffe2
