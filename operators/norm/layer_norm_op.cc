// LayerNorm: [X] -> [Y, mean, stdev] (spec ops §1.3). X is viewed as (M, D) at `axis` (default 1);
// each row is normalized: Y = (x - mean) / stdev with stdev = sqrt(biased var + epsilon)
// (epsilon default 1e-5). mean and stdev have dims X.dims[:axis] + [1].
// LayerNormGradient: [dY, Y, mean, stdev, X] -> [dX]; with xhat = (x - mean) / stdev per row:
// dX = (dY - mean(dY) - xhat * mean(dY * xhat)) / stdev.
#include <cmath>
#include <vector>

#include <Eigen/Core>

#include "core/gradient.h"
#include "core/operator.h"
#include "operators/norm/norm_op_checks.h"

namespace caffe2 {
namespace {

using RowMajor = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;

class LayerNormOp final : public Operator<CPUContext> {
 public:
  LayerNormOp(const OperatorDef& def, Workspace* ws)
      : Operator<CPUContext>(def, ws),
        axis_(GetSingleArgument<int>("axis", 1)),
        epsilon_(GetSingleArgument<float>("epsilon", 1e-5f)) {
    CheckNormEpsilon(epsilon_);
  }

  bool RunOnDevice() override {
    const Tensor& X = Input(0);
    const LayerNormView v = CheckLayerNormInput(axis_, X);
    const int64_t M = v.M, D = v.D;
    std::vector<float> mean(M), stdev(M);
    Eigen::Map<const RowMajor> x(X.data<float>(), M, D);
    for (int64_t i = 0; i < M; ++i) {
      const double m = x.row(i).cast<double>().mean();
      const double var = std::max(0.0, x.row(i).cast<double>().array().square().mean() - m * m);
      mean[i] = static_cast<float>(m);
      stdev[i] = static_cast<float>(std::sqrt(var + epsilon_));
    }
    Tensor* Y = Output(0);
    Y->ResizeLike(X);
    Eigen::Map<RowMajor> y(Y->mutable_data<float>(), M, D);
    for (int64_t i = 0; i < M; ++i) y.row(i) = (x.row(i).array() - mean[i]) / stdev[i];
    for (int k = 1; k <= 2; ++k) {
      Tensor* out = Output(k);
      out->Resize(v.moments_dims);
      const std::vector<float>& src = k == 1 ? mean : stdev;
      std::copy(src.begin(), src.end(), out->mutable_data<float>());
    }
    return true;
  }

 private:
  int axis_;
  float epsilon_;
};

class LayerNormGradientOp final : public Operator<CPUContext> {
 public:
  LayerNormGradientOp(const OperatorDef& def, Workspace* ws)
      : Operator<CPUContext>(def, ws), axis_(GetSingleArgument<int>("axis", 1)) {}

  bool RunOnDevice() override {
    const Tensor& dY = Input(0);
    const Tensor& mean = Input(2);
    const Tensor& stdev = Input(3);
    const Tensor& X = Input(4);
    const LayerNormView v = CheckLayerNormGradientInputs(axis_, dY, mean, stdev, X);
    const int64_t M = v.M, D = v.D;
    Eigen::Map<const RowMajor> x(X.data<float>(), M, D), dy(dY.data<float>(), M, D);
    Tensor* dX = Output(0);
    dX->ResizeLike(X);
    Eigen::Map<RowMajor> dx(dX->mutable_data<float>(), M, D);
    const float* mu = mean.data<float>();
    const float* sd = stdev.data<float>();
    for (int64_t i = 0; i < M; ++i) {
      const Eigen::ArrayXf xhat = ((x.row(i).array() - mu[i]) / sd[i]).transpose();
      const Eigen::ArrayXf g = dy.row(i).array().transpose();
      const float mean_dy = g.mean();
      const float mean_dyx = (g * xhat).mean();
      dx.row(i) = ((g - mean_dy - xhat * mean_dyx) / sd[i]).matrix().transpose();
    }
    return true;
  }

 private:
  int axis_;
};

class GetLayerNormGradient final : public GradientMakerBase {
  using GradientMakerBase::GradientMakerBase;
  std::vector<OperatorDef> GetGradientDefs() override {
    return SingleGradientDef("LayerNormGradient", "", {GO(0), O(0), O(1), O(2), I(0)}, {GI(0)});
  }
};

}  // namespace

REGISTER_CPU_OPERATOR(LayerNorm, LayerNormOp);
OPERATOR_SCHEMA(LayerNorm)
    .NumInputs(1)
    .NumOutputs(3)
    .TensorInference([](const OperatorDef& def, const std::vector<TensorShape>& in) {
      int axis = ArgumentHelper(def).GetSingleArgument<int>("axis", 1);
      const TensorShape& x = in.at(0);
      if (axis < 0) axis += x.dims_size();
      TensorShape m;
      m.set_data_type(TensorProto::FLOAT);
      for (int i = 0; i < axis && i < x.dims_size(); ++i) m.add_dims(x.dims(i));
      m.add_dims(1);
      return std::vector<TensorShape>{x, m, m};
    })
    .Arg("axis", "X is viewed as 2-D at this axis; rows are normalized (default 1)")
    .Arg("epsilon", "added to the variance (default 1e-5)")
    .SetDoc("Layer normalization of the rows of X viewed as 2-D.")
    .Input(0, "X", "Input")
    .Output(0, "Y", "Normalized output, shaped like X")
    .Output(1, "mean", "Row means, dims[:axis] + [1]")
    .Output(2, "stdev", "Row sqrt(var + epsilon), dims[:axis] + [1]");
REGISTER_GRADIENT(LayerNorm, GetLayerNormGradient);
REGISTER_CPU_OPERATOR(LayerNormGradient, LayerNormGradientOp);
OPERATOR_SCHEMA(LayerNormGradient)
    .NumInputs(5)
    .NumOutputs(1)
    .SetDoc("The gradient of LayerNorm: [dY, Y, mean, stdev, X] -> [dX].")
    .Arg("axis", "(int, default 1) the forward op's axis: X is viewed as 2-D there");

}  // namespace caffe2
