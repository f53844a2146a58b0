// SparseToDense: [INDICES (int32/int64), VALUES, DATA_TO_INFER_DIM?] -> [OUTPUT]. OUTPUT has
// first dim DATA_TO_INFER_DIM.dims[0] (or max(INDICES) + 1) and the trailing dims
// VALUES.dims[INDICES.ndim:]; row INDICES[k] accumulates VALUES row k, other rows are zero.
// float, double, int32, int64 values. NO_GRADIENT here (it is the dense gradient of Gather).
#include "core/gpu_fallback_declarations.h"
#include "core/gradient.h"
#include "operators/tensor/tensor_util.h"

namespace caffe2 {
namespace {

class SparseToDenseOp final : public Operator<CPUContext> {
 public:
  using Operator<CPUContext>::Operator;
  bool RunOnDevice() override {
    const Tensor& indices = Input(0);
    const Tensor& values = Input(1);
    const std::vector<int64_t> idx = IntValues(indices, "INDICES");
    C2_ENFORCE(values.ndim() >= indices.ndim() &&
                   std::equal(indices.dims().begin(), indices.dims().end(), values.dims().begin()),
               "VALUES ", Tensor::DimsString(values.dims()), " must start with the INDICES dims ",
               Tensor::DimsString(indices.dims()));
    int64_t rows = 0;
    for (int64_t i : idx) rows = std::max(rows, i + 1);
    if (InputSize() == 3) {
      C2_ENFORCE(Input(2).ndim() >= 1, "DATA_TO_INFER_DIM must have a first dim");
      rows = Input(2).dim(0);
    }
    std::vector<int64_t> dims{rows};
    dims.insert(dims.end(), values.dims().begin() + indices.ndim(), values.dims().end());
    Tensor* out = Output(0);
    out->Resize(dims);
    switch (values.dtype()) {
      case DataType::FLOAT:
        return Scatter<float>(idx, values, rows, out);
      case DataType::DOUBLE:
        return Scatter<double>(idx, values, rows, out);
      case DataType::INT32:
        return Scatter<int32_t>(idx, values, rows, out);
      case DataType::INT64:
        return Scatter<int64_t>(idx, values, rows, out);
      default:
        C2_THROW("unsupported VALUES type ", values.meta().name);
    }
  }

 private:
  template <class T>
  bool Scatter(const std::vector<int64_t>& idx, const Tensor& values, int64_t rows, Tensor* out) {
    const int64_t block = out->size_from_dim(1);
    T* o = out->mutable_data<T>();
    std::fill(o, o + out->numel(), T(0));
    const T* v = values.data<T>();
    for (size_t k = 0; k < idx.size(); ++k) {
      C2_ENFORCE(idx[k] >= 0 && idx[k] < rows, "index ", idx[k], " at position ", k,
                 " out of range for ", rows, " rows");
      T* row = o + idx[k] * block;
      for (int64_t j = 0; j < block; ++j) row[j] += v[k * block + j];
    }
    return true;
  }
};

}  // namespace

REGISTER_CPU_OPERATOR(SparseToDense, SparseToDenseOp);
REGISTER_GPU_FALLBACK(SparseToDense);  // CUDA runs the CPU kernel
OPERATOR_SCHEMA(SparseToDense)
    .NumInputs(2, 3)
    .NumOutputs(1)
    .TensorInference([](const OperatorDef&, const std::vector<TensorShape>& in) {
      // [first dim of data_to_infer_dim, values.dims[1:]]; without input 2 the first dim is the
      // largest index + 1, a runtime value.
      TensorShape out = in[1];
      if (in.size() < 3 || in[2].unknown_shape() || in[2].dims_size() == 0 ||
          in[1].unknown_shape() || in[1].dims_size() == 0) {
        out.clear_dims();
        out.set_unknown_shape(true);
        return std::vector<TensorShape>{out};
      }
      out.set_dims(0, in[2].dims(0));
      return std::vector<TensorShape>{out};
    })
    .SetDoc("Scatters rows of VALUES into a zero tensor at INDICES, summing repeats.");
REGISTER_GRADIENT(SparseToDense, NoGradient);

}  // namespace caffe2
