// Gather: schema, gradient and the CPU kernel (contract in gather_op.h).
#include "operators/index/gather_op.h"

#include "core/gradient.h"

namespace caffe2 {
namespace {

class GatherOp final : public Operator<CPUContext> {
 public:
  using Operator<CPUContext>::Operator;
  bool RunOnDevice() override {
    const Tensor& data = Input(0);
    const Tensor& indices = Input(1);
    const std::vector<int64_t> dims = GatherDims(data, indices);
    const std::vector<int64_t> idx = IntValues(indices, "INDICES");
    const int64_t block = data.size_from_dim(1);
    const TypeMeta& meta = data.meta();
    const char* src = static_cast<const char*>(data.raw_data());
    Tensor* out = Output(0);
    out->Resize(dims);
    char* dst = static_cast<char*>(out->raw_mutable_data(meta));
    const size_t bytes = block * meta.itemsize;
    for (size_t i = 0; i < idx.size(); ++i) {
      CheckGatherIndex(idx[i], i, data);
      CopyItems(meta, block, src + idx[i] * bytes, dst + i * bytes);
    }
    return true;
  }
};

class GetGatherGradient final : public GradientMakerBase {
  using GradientMakerBase::GradientMakerBase;
  std::vector<OperatorDef> GetGradientDefs() override {
    ArgumentHelper args(Def());
    if (args.GetSingleArgument<bool>("dense_gradient", false)) {
      return SingleGradientDef("SparseToDense", "", {I(1), GO(0), I(0)}, {GI(0)});
    }
    SetSparse(0, I(1), GO(0));
    return {};
  }
};

}  // namespace

REGISTER_CPU_OPERATOR(Gather, GatherOp);
OPERATOR_SCHEMA(Gather)
    .NumInputs(2)
    .NumOutputs(1)
    .TensorInference([](const OperatorDef&, const std::vector<TensorShape>& in) {
      TensorShape out = in[0];
      out.clear_dims();
      for (int64_t d : in[1].dims()) out.add_dims(d);
      for (int i = 1; i < in[0].dims_size(); ++i) out.add_dims(in[0].dims(i));
      return std::vector<TensorShape>{out};
    })
    .Arg("dense_gradient", "Emit a dense gradient for DATA (SparseToDense)")
    .SetDoc("Picks rows of DATA by index.");
REGISTER_GRADIENT(Gather, GetGatherGradient);

}  // namespace caffe2
