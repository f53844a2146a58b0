// BatchGather: [DATA (N, M, ...), INDICES (int32/int64, any shape)] -> [OUTPUT], the Gather of
// every batch row along the second dimension: OUTPUT[n, i...] = DATA[n, INDICES[i...]], shaped
// (N,) + INDICES.dims + DATA.dims[2:]. Any element type; indices must lie in [0, M).
// BatchGatherGradient: [DATA, INDICES, dOUTPUT] -> [dDATA] (float, double), zeros with dOUTPUT's
// rows added where they were gathered from (repeated indices add up).
#include "core/gpu_fallback_declarations.h"
#include "core/gradient.h"
#include "operators/common/elementwise_cpu.h"
#include "operators/tensor/tensor_util.h"

namespace caffe2 {
namespace {

struct BatchGatherShape {
  int64_t N, M, block;           // block: the items of one DATA[n, m]
  std::vector<int64_t> indices;  // checked to lie in [0, M)
  std::vector<int64_t> out_dims;
};

BatchGatherShape CheckBatchGather(const Tensor& data, const Tensor& indices) {
  C2_ENFORCE(data.ndim() >= 2, "DATA must have at least two dimensions (batch, M, ...), got ",
             data.DebugString());
  BatchGatherShape s;
  s.N = data.dim(0);
  s.M = data.dim(1);
  s.block = Prod(data.dims(), 2, data.ndim());
  s.indices = IntValues(indices, "INDICES");
  for (size_t i = 0; i < s.indices.size(); ++i) {
    C2_ENFORCE(s.indices[i] >= 0 && s.indices[i] < s.M, "index ", s.indices[i], " at position ", i,
               " out of range for DATA ", Tensor::DimsString(data.dims()), " (axis 1)");
  }
  s.out_dims = {s.N};
  s.out_dims.insert(s.out_dims.end(), indices.dims().begin(), indices.dims().end());
  s.out_dims.insert(s.out_dims.end(), data.dims().begin() + 2, data.dims().end());
  return s;
}

class BatchGatherOp final : public Operator<CPUContext> {
 public:
  using Operator<CPUContext>::Operator;
  bool RunOnDevice() override {
    const Tensor& data = Input(0);
    const BatchGatherShape s = CheckBatchGather(data, Input(1));
    Tensor* out = Output(0);
    out->Resize(s.out_dims);
    const size_t item = data.meta().itemsize;
    const char* src = static_cast<const char*>(data.raw_data());
    char* dst = static_cast<char*>(out->raw_mutable_data(data.meta()));
    const int64_t K = static_cast<int64_t>(s.indices.size());
    for (int64_t n = 0; n < s.N; ++n)
      for (int64_t k = 0; k < K; ++k) {
        const int64_t from = (n * s.M + s.indices[k]) * s.block;
        const int64_t to = (n * K + k) * s.block;
        CopyItems(data.meta(), s.block, src + from * item, dst + to * item);
      }
    return true;
  }
};

using GradTypes = TypeList<float, double>;

class BatchGatherGradientOp final : public Operator<CPUContext> {
 public:
  using Operator<CPUContext>::Operator;
  bool RunOnDevice() override {
    const Tensor& data = Input(0);
    const Tensor& dout = Input(2);
    const BatchGatherShape s = CheckBatchGather(data, Input(1));
    C2_ENFORCE(dout.dims() == s.out_dims, "dOUTPUT must have OUTPUT's shape ",
               Tensor::DimsString(s.out_dims), ", got ", dout.DebugString());
    const bool ok = DispatchType(dout.meta(), GradTypes{}, [&](auto tag) {
      using T = typename decltype(tag)::type;
      Tensor* ddata = Output(0);
      ddata->Resize(data.dims());
      T* dd = ddata->template mutable_data<T>();
      std::fill(dd, dd + ddata->numel(), T(0));
      const T* g = dout.template data<T>();
      const int64_t K = static_cast<int64_t>(s.indices.size());
      for (int64_t n = 0; n < s.N; ++n)
        for (int64_t k = 0; k < K; ++k) {
          T* to = dd + (n * s.M + s.indices[k]) * s.block;
          const T* from = g + (n * K + k) * s.block;
          for (int64_t j = 0; j < s.block; ++j) to[j] += from[j];
        }
    });
    C2_ENFORCE(ok, "unsupported type ", dout.meta().name,
               " for dOUTPUT (supported: ", TypeNames(GradTypes{}), ")");
    return true;
  }
};

class GetBatchGatherGradient final : public GradientMakerBase {
  using GradientMakerBase::GradientMakerBase;
  std::vector<OperatorDef> GetGradientDefs() override {
    return SingleGradientDef("BatchGatherGradient", "", {I(0), I(1), GO(0)}, {GI(0)});
  }
};

}  // namespace

REGISTER_CPU_OPERATOR(BatchGather, BatchGatherOp);
REGISTER_GPU_FALLBACK(BatchGather);  // CUDA runs the CPU kernel
OPERATOR_SCHEMA(BatchGather)
    .NumInputs(2)
    .NumOutputs(1)
    .TensorInference([](const OperatorDef&, const std::vector<TensorShape>& in) {
      TensorShape out;
      out.set_data_type(in.at(0).data_type());
      if (in[0].dims_size() < 2) {
        out.set_unknown_shape(true);
        return std::vector<TensorShape>{out};
      }
      out.add_dims(in[0].dims(0));
      for (int64_t d : in.at(1).dims()) out.add_dims(d);
      for (int d = 2; d < in[0].dims_size(); ++d) out.add_dims(in[0].dims(d));
      return std::vector<TensorShape>{out};
    })
    .Input(0, "DATA", "(batch, M, ...) tensor of any type")
    .Input(1, "INDICES", "int32/int64 indices into the second dimension, any shape")
    .Output(0, "OUTPUT", "(batch,) + INDICES.shape + DATA.shape[2:]")
    .SetDoc("Gather along the second dimension of every batch row.");
REGISTER_GRADIENT(BatchGather, GetBatchGatherGradient);
REGISTER_CPU_OPERATOR(BatchGatherGradient, BatchGatherGradientOp);
REGISTER_GPU_FALLBACK(BatchGatherGradient);  // CUDA runs the CPU kernel
OPERATOR_SCHEMA(BatchGatherGradient).NumInputs(3).NumOutputs(1).IdenticalTypeAndShapeOfInput(0);

}  // namespace caffe2
