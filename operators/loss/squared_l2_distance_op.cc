// SquaredL2Distance: [X, Y] -> [Z], Z_i = 0.5 * sum_j (X_ij - Y_ij)^2 per row i (float).
// Gradient SquaredL2DistanceGradient: [X, Y, dZ] -> [dX, dY], dX = (X - Y) * dZ_i, dY = -dX.
#include "core/gradient.h"
#include "core/operator.h"
#include "operators/loss/squared_l2_distance_op.h"

namespace caffe2 {
namespace {

class SquaredL2DistanceOp final : public Operator<CPUContext> {
 public:
  using Operator<CPUContext>::Operator;
  bool RunOnDevice() override {
    const Tensor& X = Input(0);
    const Tensor& Y = Input(1);
    const SquaredL2DistanceShape s = CheckSquaredL2DistanceInputs(X, Y);
    const int64_t n = s.n, d = s.d;
    Tensor* Z = Output(0);
    Z->Resize(n);
    float* z = Z->mutable_data<float>();
    const float* x = X.data<float>();
    const float* y = Y.data<float>();
    for (int64_t i = 0; i < n; ++i) {
      double acc = 0;
      for (int64_t j = 0; j < d; ++j) {
        double diff = x[i * d + j] - y[i * d + j];
        acc += diff * diff;
      }
      z[i] = static_cast<float>(0.5 * acc);
    }
    return true;
  }
};

class SquaredL2DistanceGradientOp final : public Operator<CPUContext> {
 public:
  using Operator<CPUContext>::Operator;
  bool RunOnDevice() override {
    const Tensor& X = Input(0);
    const Tensor& Y = Input(1);
    const Tensor& dZ = Input(2);
    const SquaredL2DistanceShape s = CheckSquaredL2DistanceInputs(X, Y);
    const int64_t n = s.n, d = s.d;
    CheckSquaredL2DistanceGradient(dZ, s);
    Tensor* dX = Output(0);
    Tensor* dY = Output(1);
    dX->ResizeLike(X);
    dY->ResizeLike(Y);
    float* dx = dX->mutable_data<float>();
    float* dy = dY->mutable_data<float>();
    const float* x = X.data<float>();
    const float* y = Y.data<float>();
    const float* dz = dZ.data<float>();
    for (int64_t i = 0; i < n; ++i) {
      for (int64_t j = 0; j < d; ++j) {
        float g = (x[i * d + j] - y[i * d + j]) * dz[i];
        dx[i * d + j] = g;
        dy[i * d + j] = -g;
      }
    }
    return true;
  }
};

class GetSquaredL2DistanceGradient final : public GradientMakerBase {
  using GradientMakerBase::GradientMakerBase;
  std::vector<OperatorDef> GetGradientDefs() override {
    return SingleGradientDef("SquaredL2DistanceGradient", "", {I(0), I(1), GO(0)}, {GI(0), GI(1)});
  }
};

}  // namespace

REGISTER_CPU_OPERATOR(SquaredL2Distance, SquaredL2DistanceOp);
OPERATOR_SCHEMA(SquaredL2Distance)
    .NumInputs(2)
    .NumOutputs(1)
    .TensorInference([](const OperatorDef&, const std::vector<TensorShape>& in) {
      TensorShape z;
      z.set_data_type(in[0].data_type());
      z.add_dims(in[0].dims_size() > 0 ? in[0].dims(0) : 1);
      return std::vector<TensorShape>{z};
    })
    .SetDoc("Half the squared L2 distance between matching rows of X and Y.");
REGISTER_GRADIENT(SquaredL2Distance, GetSquaredL2DistanceGradient);
REGISTER_CPU_OPERATOR(SquaredL2DistanceGradient, SquaredL2DistanceGradientOp);
OPERATOR_SCHEMA(SquaredL2DistanceGradient).NumInputs(3).NumOutputs(2);

}  // namespace caffe2
