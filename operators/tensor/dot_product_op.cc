// DotProduct: [X, Y] (float, one shape, N rows) -> [Z (N)], Z[i] = sum_j X[i, j] Y[i, j], each row
// being everything past the first dimension (a 1-d X: Z = X * Y).
// DotProductGradient: [X, Y, dZ] -> [dX, dY], dX[i, j] = dZ[i] Y[i, j], dY[i, j] = dZ[i] X[i, j].
#include "core/gpu_fallback_declarations.h"
#include "core/gradient.h"
#include "core/operator.h"

namespace caffe2 {
namespace {

struct DotRows {
  int64_t N, D;
};

DotRows CheckDotInputs(const Tensor& X, const Tensor& Y) {
  C2_ENFORCE(X.IsType<float>() && Y.IsType<float>(), "X and Y must be float tensors, got ",
             X.DebugString(), " and ", Y.DebugString());
  C2_ENFORCE(X.dims() == Y.dims(), "X ", Tensor::DimsString(X.dims()), " and Y ",
             Tensor::DimsString(Y.dims()), " must have the same shape");
  C2_ENFORCE(X.ndim() >= 1, "X and Y must have at least one dimension, got 0-d tensors");
  const int64_t N = X.dim(0);
  return {N, N == 0 ? 0 : X.numel() / N};
}

class DotProductOp final : public Operator<CPUContext> {
 public:
  using Operator<CPUContext>::Operator;
  bool RunOnDevice() override {
    const Tensor& X = Input(0);
    const Tensor& Y = Input(1);
    const DotRows r = CheckDotInputs(X, Y);
    Tensor* Z = Output(0);
    Z->Resize(r.N);
    const float* x = X.data<float>();
    const float* y = Y.data<float>();
    float* z = Z->mutable_data<float>();
    for (int64_t i = 0; i < r.N; ++i) {
      double sum = 0;
      for (int64_t j = i * r.D; j < (i + 1) * r.D; ++j) sum += double(x[j]) * y[j];
      z[i] = static_cast<float>(sum);
    }
    return true;
  }
};

class DotProductGradientOp final : public Operator<CPUContext> {
 public:
  using Operator<CPUContext>::Operator;
  bool RunOnDevice() override {
    const Tensor& X = Input(0);
    const Tensor& Y = Input(1);
    const Tensor& dZ = Input(2);
    const DotRows r = CheckDotInputs(X, Y);
    C2_ENFORCE(dZ.IsType<float>() && dZ.dims() == std::vector<int64_t>{r.N}, "dZ must be a float (",
               r.N, ") tensor, got ", dZ.DebugString());
    Tensor* dX = Output(0);
    Tensor* dY = Output(1);
    dX->ResizeLike(X);
    dY->ResizeLike(Y);
    const float* x = X.data<float>();
    const float* y = Y.data<float>();
    const float* dz = dZ.data<float>();
    float* dx = dX->mutable_data<float>();
    float* dy = dY->mutable_data<float>();
    for (int64_t i = 0; i < r.N; ++i)
      for (int64_t j = i * r.D; j < (i + 1) * r.D; ++j) {
        dx[j] = dz[i] * y[j];
        dy[j] = dz[i] * x[j];
      }
    return true;
  }
};

class GetDotProductGradient final : public GradientMakerBase {
  using GradientMakerBase::GradientMakerBase;
  std::vector<OperatorDef> GetGradientDefs() override {
    return SingleGradientDef("DotProductGradient", "", {I(0), I(1), GO(0)}, {GI(0), GI(1)});
  }
};

}  // namespace

REGISTER_CPU_OPERATOR(DotProduct, DotProductOp);
REGISTER_GPU_FALLBACK(DotProduct);  // CUDA runs the CPU kernel
OPERATOR_SCHEMA(DotProduct)
    .NumInputs(2)
    .NumOutputs(1)
    .TensorInference([](const OperatorDef&, const std::vector<TensorShape>& in) {
      TensorShape z;
      z.set_data_type(TensorProto::FLOAT);
      if (in.at(0).dims_size() > 0) z.add_dims(in[0].dims(0));
      return std::vector<TensorShape>{z};
    })
    .CostInference([](const OperatorDef&, const std::vector<TensorShape>& in) {
      OpSchema::Cost c;
      uint64_t n = 1;
      for (int64_t d : in.at(0).dims()) n *= static_cast<uint64_t>(d);
      const uint64_t rows = in[0].dims_size() > 0 ? in[0].dims(0) : 1;
      c.flops = 2 * n;
      c.bytes_moved = (2 * n + rows) * sizeof(float);
      return c;
    })
    .Input(0, "X", "float (N, ...)")
    .Input(1, "Y", "float, X's shape")
    .Output(0, "Z", "the dot product of each row of X with the row of Y, (N)")
    .SetDoc("Row-wise dot products of two tensors of one shape.");
REGISTER_GRADIENT(DotProduct, GetDotProductGradient);
REGISTER_CPU_OPERATOR(DotProductGradient, DotProductGradientOp);
REGISTER_GPU_FALLBACK(DotProductGradient);  // CUDA runs the CPU kernel
OPERATOR_SCHEMA(DotProductGradient).NumInputs(3).NumOutputs(2);

}  // namespace caffe2
