// TopK: [X] -> [values, indices (int64), flatten_indices (int64)?] (spec ops §1.3). The k largest
// values along `axis` (-1) in descending order (the lower index first on ties); values and indices
// have X's dims with dim[axis] = k; flatten_indices is 1-D (as many as values, in their order) and
// holds each value's position in X.flatten().
// `k` is required and must be in [1, X.dims[axis]]. float, double, int32, int64.
// TopKGradient: [dValues, indices, X] -> [dX], dValues scattered back to where they came from.
#include <algorithm>
#include <numeric>

#include "core/gpu_fallback_declarations.h"
#include "core/gradient.h"
#include "operators/tensor/tensor_util.h"

namespace caffe2 {
namespace {

class TopKOp final : public Operator<CPUContext> {
 public:
  TopKOp(const OperatorDef& def, Workspace* ws)
      : Operator<CPUContext>(def, ws),
        k_(GetSingleArgument<int64_t>("k", -1)),
        axis_(GetSingleArgument<int>("axis", -1)) {
    C2_ENFORCE(HasArgument("k") && k_ >= 1, "argument 'k' is required and must be positive, got ",
               k_);
  }

  bool RunOnDevice() override {
    const Tensor& X = Input(0);
    switch (X.dtype()) {
      case DataType::FLOAT:
        return Compute<float>(X);
      case DataType::DOUBLE:
        return Compute<double>(X);
      case DataType::INT32:
        return Compute<int32_t>(X);
      case DataType::INT64:
        return Compute<int64_t>(X);
      default:
        C2_THROW("unsupported input type ", X.meta().name);
    }
  }

 private:
  template <class T>
  bool Compute(const Tensor& X) {
    const int axis = CanonicalAxis(axis_, X.ndim());
    const int64_t n = X.dim(axis);
    C2_ENFORCE(k_ <= n, "k ", k_, " is larger than dim ", axis, " of X ",
               Tensor::DimsString(X.dims()));
    std::vector<int64_t> dims = X.dims();
    dims[axis] = k_;
    Tensor* values = Output(0);
    Tensor* indices = Output(1);
    values->Resize(dims);
    indices->Resize(dims);
    int64_t* flat = nullptr;
    if (OutputSize() == 3) {
      Output(2)->Resize(values->numel());
      flat = Output(2)->mutable_data<int64_t>();
    }
    const int64_t outer = X.size_to_dim(axis);
    const int64_t inner = X.size_from_dim(axis + 1);
    const T* x = X.data<T>();
    T* v = values->mutable_data<T>();
    int64_t* ix = indices->mutable_data<int64_t>();
    std::vector<int64_t> order(n);
    for (int64_t o = 0; o < outer; ++o) {
      for (int64_t i = 0; i < inner; ++i) {
        const T* base = x + o * n * inner + i;
        std::iota(order.begin(), order.end(), 0);
        std::partial_sort(order.begin(), order.begin() + k_, order.end(),
                          [&](int64_t a, int64_t b) {
                            return base[a * inner] > base[b * inner] ||
                                   (base[a * inner] == base[b * inner] && a < b);
                          });
        for (int64_t j = 0; j < k_; ++j) {
          const int64_t out = (o * k_ + j) * inner + i;
          v[out] = base[order[j] * inner];
          ix[out] = order[j];
          if (flat) flat[out] = (o * n + order[j]) * inner + i;
        }
      }
    }
    return true;
  }

  int64_t k_;
  int axis_;
};

class TopKGradientOp final : public Operator<CPUContext> {
 public:
  TopKGradientOp(const OperatorDef& def, Workspace* ws)
      : Operator<CPUContext>(def, ws), axis_(GetSingleArgument<int>("axis", -1)) {}

  bool RunOnDevice() override {
    const Tensor& dv = Input(0);
    const Tensor& indices = Input(1);
    const Tensor& X = Input(2);
    C2_ENFORCE(dv.IsType<float>() && indices.IsType<int64_t>(),
               "expects float dValues and int64 indices");
    C2_ENFORCE(dv.dims() == indices.dims() && dv.ndim() == X.ndim(), "dValues ",
               Tensor::DimsString(dv.dims()), " and indices ", Tensor::DimsString(indices.dims()),
               " do not fit X ", Tensor::DimsString(X.dims()));
    const int axis = CanonicalAxis(axis_, X.ndim());
    const int64_t n = X.dim(axis);
    const int64_t k = dv.dim(axis);
    const int64_t outer = X.size_to_dim(axis);
    const int64_t inner = X.size_from_dim(axis + 1);
    Tensor* dX = Output(0);
    dX->Resize(X.dims());
    float* dx = dX->mutable_data<float>();
    std::fill(dx, dx + dX->numel(), 0.f);
    const float* g = dv.data<float>();
    const int64_t* ix = indices.data<int64_t>();
    for (int64_t o = 0; o < outer; ++o) {
      for (int64_t j = 0; j < k; ++j) {
        for (int64_t i = 0; i < inner; ++i) {
          const int64_t src = (o * k + j) * inner + i;
          C2_ENFORCE(ix[src] >= 0 && ix[src] < n, "index ", ix[src], " out of range for dim ", n);
          dx[(o * n + ix[src]) * inner + i] += g[src];
        }
      }
    }
    return true;
  }

 private:
  int axis_;
};

class GetTopKGradient final : public GradientMakerBase {
  using GradientMakerBase::GradientMakerBase;
  std::vector<OperatorDef> GetGradientDefs() override {
    return SingleGradientDef("TopKGradient", "", {GO(0), O(1), I(0)}, {GI(0)});
  }
};

std::vector<TensorShape> TopKInference(const OperatorDef& def, const std::vector<TensorShape>& in) {
  ArgumentHelper args(def);
  const int ndim = in[0].dims_size();
  int axis = args.GetSingleArgument<int>("axis", -1);
  TensorShape values = in[0];
  TensorShape indices = in[0];
  indices.set_data_type(TensorProto::INT64);
  if (axis >= -ndim && axis < ndim) {
    if (axis < 0) axis += ndim;
    values.set_dims(axis, args.GetSingleArgument<int64_t>("k", -1));
    indices.set_dims(axis, args.GetSingleArgument<int64_t>("k", -1));
  } else {
    values.set_unknown_shape(true);
    indices.set_unknown_shape(true);
  }
  std::vector<TensorShape> out{values, indices};
  if (def.output_size() == 3) {
    TensorShape flat;
    flat.set_data_type(TensorProto::INT64);
    if (indices.unknown_shape()) {
      flat.set_unknown_shape(true);
    } else {
      int64_t n = 1;
      for (int64_t d : indices.dims()) n *= d;
      flat.add_dims(n);
    }
    out.push_back(flat);
  }
  return out;
}

}  // namespace

REGISTER_CPU_OPERATOR(TopK, TopKOp);
REGISTER_GPU_FALLBACK(TopK);  // CUDA runs the CPU kernel
OPERATOR_SCHEMA(TopK)
    .NumInputs(1)
    .NumOutputs(2, 3)
    .TensorInference(TopKInference)
    .Arg("k", "Number of values to keep", true)
    .Arg("axis", "Axis to search (-1)")
    .SetDoc("The k largest values along an axis and their indices.");
REGISTER_GRADIENT(TopK, GetTopKGradient);
REGISTER_CPU_OPERATOR(TopKGradient, TopKGradientOp);
REGISTER_GPU_FALLBACK(TopKGradient);  // CUDA runs the CPU kernel
OPERATOR_SCHEMA(TopKGradient)
    .NumInputs(3)
    .NumOutputs(1)
    .SetDoc("The gradient of TopK: [dValues, indices, X] -> [dX], zero off the kept positions.")
    .Arg("axis", "(int, default -1) the forward op's axis");

}  // namespace caffe2
