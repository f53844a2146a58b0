#include "operators/fill/random_fill_op.h"

#include <algorithm>
#include <cmath>
#include <random>
#include <unordered_set>

#include "core/gpu_fallback_declarations.h"
#include "core/gradient.h"
#include "operators/tensor/tensor_util.h"

namespace caffe2 {

GaussianFillOp::GaussianFillOp(const OperatorDef& def, Workspace* ws)
    : FillerOp(def, ws),
      mean_(GetSingleArgument<float>("mean", 0.f)),
      std_(GetSingleArgument<float>("std", 1.f)) {
  C2_ENFORCE(std_ >= 0, "'std' must be non-negative, got ", std_);
}

void GaussianFillOp::Fill(Tensor* out) {
  std::normal_distribution<float> dist(mean_, std_);
  float* data = out->mutable_data<float>();
  for (int64_t i = 0; i < out->numel(); ++i)
    data[i] = std_ > 0 ? dist(context_.RandGenerator()) : mean_;
}

template <class T>
UniformFillOp<T>::UniformFillOp(const OperatorDef& def, Workspace* ws)
    : FillerOp(def, ws),
      min_(GetSingleArgument<T>("min", 0)),
      max_(GetSingleArgument<T>("max", 1)) {
  C2_ENFORCE(InputSize() != 2, "takes 0, 1 or 3 inputs ([shape_src, min, max]), got 2");
  if (InputSize() < 3) {
    C2_ENFORCE(min_ <= max_, "'min' ", min_, " is larger than 'max' ", max_);
  }
}

template <class T>
void UniformFillOp<T>::Fill(Tensor* out) {
  T lo = min_, hi = max_;
  if (InputSize() == 3) {
    for (int i = 1; i <= 2; ++i) {
      C2_ENFORCE(Input(i).numel() == 1 && Input(i).template IsType<T>(), i == 1 ? "min" : "max",
                 " input must be a one-element ", TypeMeta::Make<T>().name, " tensor, got ",
                 Input(i).DebugString());
    }
    lo = Input(1).template data<T>()[0];
    hi = Input(2).template data<T>()[0];
    if (lo > hi) {
      std::vector<int64_t> dims = out->dims();
      C2_ENFORCE(!dims.empty(), "min > max needs an output with a first dim to empty");
      dims[0] = 0;
      out->Resize(dims);
      out->template mutable_data<T>();
      return;
    }
  }
  T* data = out->template mutable_data<T>();
  auto& gen = context_.RandGenerator();
  if constexpr (std::is_floating_point_v<T>) {
    std::uniform_real_distribution<T> dist(lo, hi);
    for (int64_t i = 0; i < out->numel(); ++i) data[i] = lo < hi ? dist(gen) : lo;
  } else {
    std::uniform_int_distribution<T> dist(lo, hi);
    for (int64_t i = 0; i < out->numel(); ++i) data[i] = dist(gen);
  }
}

template class UniformFillOp<float>;
template class UniformFillOp<int32_t>;

void XavierFillOp::Fill(Tensor* out) {
  C2_ENFORCE(out->ndim() >= 1 && out->dim(0) > 0, "XavierFill needs a first dim > 0, got ",
             Tensor::DimsString(out->dims()));
  const double fan_in = static_cast<double>(out->numel()) / out->dim(0);
  const float scale = static_cast<float>(std::sqrt(3.0 / fan_in));
  std::uniform_real_distribution<float> dist(-scale, scale);
  float* data = out->mutable_data<float>();
  for (int64_t i = 0; i < out->numel(); ++i) data[i] = dist(context_.RandGenerator());
}

void MSRAFillOp::Fill(Tensor* out) {
  C2_ENFORCE(out->ndim() >= 2 && out->dim(1) > 0,
             "MSRAFill needs at least 2 dims with dim(1) > 0, got ",
             Tensor::DimsString(out->dims()));
  const double fan_out = static_cast<double>(out->numel()) / out->dim(1);
  std::normal_distribution<float> dist(0.f, static_cast<float>(std::sqrt(2.0 / fan_out)));
  float* data = out->mutable_data<float>();
  for (int64_t i = 0; i < out->numel(); ++i) data[i] = dist(context_.RandGenerator());
}

UniqueUniformFillOp::UniqueUniformFillOp(const OperatorDef& def, Workspace* ws)
    : FillerOp(def, ws),
      min_(GetSingleArgument<int64_t>("min", 0)),
      max_(GetSingleArgument<int64_t>("max", 1)),
      dtype_(static_cast<DataType>(
          GetSingleArgument<int>("dtype", static_cast<int>(DataType::INT32)))) {
  C2_ENFORCE(dtype_ == DataType::INT32 || dtype_ == DataType::INT64,
             "dtype must be INT32 or INT64, got ", DataTypeName(dtype_));
  C2_ENFORCE(min_ <= max_, "'min' ", min_, " is larger than 'max' ", max_);
}

void UniqueUniformFillOp::Fill(Tensor* out) {
  if (dtype_ == DataType::INT32) return FillTyped<int32_t>(out);
  FillTyped<int64_t>(out);
}

template <class T>
void UniqueUniformFillOp::FillTyped(Tensor* out) {
  std::unordered_set<int64_t> avoid;
  if (InputSize() == 2) {
    for (int64_t v : IntValues(Input(1), "avoid")) {
      if (v >= min_ && v <= max_) avoid.insert(v);
    }
  }
  const int64_t n = out->numel();
  const int64_t available = (max_ - min_ + 1) - static_cast<int64_t>(avoid.size());
  C2_ENFORCE(n <= available, "cannot draw ", n, " distinct values from [", min_, ", ", max_,
             "] with ", avoid.size(), " values to avoid (", available, " left)");
  T* data = out->mutable_data<T>();
  auto& gen = context_.RandGenerator();
  if (max_ - min_ + 1 <= 4 * n + 64) {
    // Small range: shuffle the candidates and keep the first n.
    std::vector<int64_t> candidates;
    for (int64_t v = min_; v <= max_; ++v) {
      if (!avoid.count(v)) candidates.push_back(v);
    }
    std::shuffle(candidates.begin(), candidates.end(), gen);
    for (int64_t i = 0; i < n; ++i) data[i] = static_cast<T>(candidates[i]);
    return;
  }
  std::uniform_int_distribution<int64_t> dist(min_, max_);
  for (int64_t i = 0; i < n; ++i) {
    int64_t v;
    do {
      v = dist(gen);
    } while (avoid.count(v));
    avoid.insert(v);
    data[i] = static_cast<T>(v);
  }
}

namespace {

// FillerTensorInference with a fixed or dtype-defaulted element type.
OpSchema::TensorInferenceFunction InferAs(TensorProto::DataType type, bool dtype_arg) {
  return [type, dtype_arg](const OperatorDef& def, const std::vector<TensorShape>& in) {
    std::vector<TensorShape> out = FillerTensorInference(def, in);
    if (!dtype_arg || !ArgumentHelper(def).HasArgument("dtype")) out[0].set_data_type(type);
    return out;
  };
}

}  // namespace

REGISTER_CPU_OPERATOR(GaussianFill, GaussianFillOp);
REGISTER_CPU_OPERATOR(UniformFill, UniformFillOp<float>);
REGISTER_CPU_OPERATOR(UniformIntFill, UniformFillOp<int32_t>);
REGISTER_CPU_OPERATOR(XavierFill, XavierFillOp);
REGISTER_CPU_OPERATOR(MSRAFill, MSRAFillOp);
REGISTER_CPU_OPERATOR(UniqueUniformFill, UniqueUniformFillOp);
REGISTER_GPU_FALLBACK(UniqueUniformFill);  // CUDA runs the CPU kernel

OPERATOR_SCHEMA(GaussianFill)
    .NumInputs(0, 1)
    .NumOutputs(1)
    .AllowInplace({{0, 0}})
    .TensorInference(InferAs(TensorProto::FLOAT, false))
    .Arg("mean", "Mean (0.0)")
    .Arg("std", "Standard deviation (1.0)")
    .SetDoc("Fills with normally distributed floats.");
OPERATOR_SCHEMA(UniformFill)
    .NumInputs({0, 1, 3})
    .NumOutputs(1)
    .AllowInplace({{0, 0}})
    .TensorInference(InferAs(TensorProto::FLOAT, false))
    .Arg("min", "Lower bound (0.0)")
    .Arg("max", "Upper bound (1.0)")
    .SetDoc("Fills with uniform floats in [min, max).");
OPERATOR_SCHEMA(UniformIntFill)
    .NumInputs({0, 1, 3})
    .NumOutputs(1)
    .AllowInplace({{0, 0}})
    .TensorInference(InferAs(TensorProto::INT32, false))
    .Arg("min", "Lower bound (0)")
    .Arg("max", "Upper bound, inclusive (1)")
    .SetDoc("Fills with uniform int32 values in [min, max].");
OPERATOR_SCHEMA(XavierFill)
    .NumInputs(0, 1)
    .NumOutputs(1)
    .AllowInplace({{0, 0}})
    .TensorInference(InferAs(TensorProto::FLOAT, false))
    .SetDoc("Fills with uniform floats in ±sqrt(3 / fan_in), fan_in = numel / dim(0).");
OPERATOR_SCHEMA(MSRAFill)
    .NumInputs(0, 1)
    .NumOutputs(1)
    .AllowInplace({{0, 0}})
    .TensorInference(InferAs(TensorProto::FLOAT, false))
    .SetDoc("Fills with normal(0, sqrt(2 / fan_out)) floats, fan_out = numel / dim(1).");
OPERATOR_SCHEMA(UniqueUniformFill)
    .NumInputs(0, 2)
    .NumOutputs(1)
    .AllowInplace({{0, 0}})
    .TensorInference(InferAs(TensorProto::INT32, true))
    .Arg("min", "Lower bound")
    .Arg("max", "Upper bound, inclusive")
    .Arg("dtype", "INT32 or INT64")
    .SetDoc("Fills with distinct uniform ints, avoiding the values of the optional second input.");

// The shape arguments of FillerOp (filler_op.h).
static OpSchema& c2_gaussian_fill_args [[maybe_unused]] = AddFillerArgs(c2_op_schema_GaussianFill);
static OpSchema& c2_uniform_fill_args [[maybe_unused]] = AddFillerArgs(c2_op_schema_UniformFill);
static OpSchema& c2_uniform_int_fill_args [[maybe_unused]] =
    AddFillerArgs(c2_op_schema_UniformIntFill);
static OpSchema& c2_xavier_fill_args [[maybe_unused]] = AddFillerArgs(c2_op_schema_XavierFill);
static OpSchema& c2_msra_fill_args [[maybe_unused]] = AddFillerArgs(c2_op_schema_MSRAFill);
static OpSchema& c2_unique_uniform_fill_args [[maybe_unused]] =
    AddFillerArgs(c2_op_schema_UniqueUniformFill);

REGISTER_GRADIENT(GaussianFill, NoGradient);
REGISTER_GRADIENT(UniformFill, NoGradient);
REGISTER_GRADIENT(UniformIntFill, NoGradient);
REGISTER_GRADIENT(XavierFill, NoGradient);
REGISTER_GRADIENT(MSRAFill, NoGradient);
REGISTER_GRADIENT(UniqueUniformFill, NoGradient);

}  // namespace caffe2
