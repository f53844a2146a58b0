// FTRL-Proximal (McMahan et al. 2013), as upstream's Ftrl / SparseFtrl. The state nz holds, for
// every element of var, its n (sum of squared gradients) then its z (shape var.dims + [2]); per
// element with gradient g:
//   n' = n + g^2,  sigma = (sqrt(n') - sqrt(n)) / alpha,  z' = z + g - sigma w,
//   w' = 0 when |z'| <= lambda1, else (lambda1 sign(z') - z') / ((beta + sqrt(n')) / alpha +
//   lambda2).
// Args alpha (0.005), beta (1.0), lambda1 (0.001), lambda2 (0.001); an optional last input, a
// one-element float, replaces alpha (a learning-rate schedule).
// Ftrl:       [var, nz, grad (var's shape) (, alpha)] -> [var, nz], in place.
// SparseFtrl: [var, nz, indices (int32/int64), grad (one var row per index) (, alpha)] ->
//             [var, nz], in place; only the indexed rows change.
// The SIMD engine names (upstream's default for optimizer.build_ftrl) run these kernels.
// SHOULD_NOT_DO_GRADIENT.
#include <cmath>

#include "core/gradient.h"
#include "operators/sgd/sgd_util.h"
#include "operators/tensor/tensor_util.h"

namespace caffe2 {
namespace {

struct FtrlParams {
  float alpha, beta, lambda1, lambda2;
};

inline void FtrlUpdate(float g, const FtrlParams& p, float* w, float* n, float* z) {
  const float n_new = *n + g * g;
  const float sigma = (std::sqrt(n_new) - std::sqrt(*n)) / p.alpha;
  *z += g - sigma * *w;
  *n = n_new;
  if (std::fabs(*z) <= p.lambda1) {
    *w = 0.f;
  } else {
    const float sign = *z > 0 ? 1.f : -1.f;
    *w = (p.lambda1 * sign - *z) / ((p.beta + std::sqrt(n_new)) / p.alpha + p.lambda2);
  }
}

class FtrlBase : public Operator<CPUContext> {
 public:
  FtrlBase(const OperatorDef& def, Workspace* ws, int alpha_input)
      : Operator<CPUContext>(def, ws),
        params_{GetSingleArgument<float>("alpha", 0.005f), GetSingleArgument<float>("beta", 1.f),
                GetSingleArgument<float>("lambda1", 0.001f),
                GetSingleArgument<float>("lambda2", 0.001f)},
        alpha_input_(alpha_input) {}

 protected:
  // var and nz checked, made the outputs (in place or copied); the params of this run.
  FtrlParams Prepare(float** w, float** nz) {
    const Tensor& var = Input(0);
    const Tensor& state = Input(1);
    C2_ENFORCE(var.IsType<float>() && state.IsType<float>(), "var and nz must be float, got ",
               var.DebugString(), " and ", state.DebugString());
    std::vector<int64_t> nz_dims = var.dims();
    nz_dims.push_back(2);
    C2_ENFORCE(state.dims() == nz_dims, "nz must have var's shape plus a last dimension of 2 (",
               Tensor::DimsString(nz_dims), "), got ", Tensor::DimsString(state.dims()));
    for (int i = 0; i < 2; ++i) {
      if (!IsInputOutputAlias(i, i)) Output(i)->CopyFrom(Input(i));
    }
    *w = Output(0)->mutable_data<float>();
    *nz = Output(1)->mutable_data<float>();
    FtrlParams p = params_;
    if (InputSize() > alpha_input_) p.alpha = ScalarFloat(Input(alpha_input_), "alpha");
    C2_ENFORCE(p.alpha > 0, "alpha must be positive, got ", p.alpha);
    return p;
  }

  FtrlParams params_;
  int alpha_input_;
};

class FtrlOp final : public FtrlBase {
 public:
  FtrlOp(const OperatorDef& def, Workspace* ws) : FtrlBase(def, ws, 3) {}
  bool RunOnDevice() override {
    const Tensor& grad = Input(2);
    CheckSameShape(Input(0), "var", grad, "grad");
    C2_ENFORCE(grad.IsType<float>(), "grad must be float, got ", grad.DebugString());
    float *w, *nz;
    const FtrlParams p = Prepare(&w, &nz);
    const float* g = grad.data<float>();
    for (int64_t i = 0; i < grad.numel(); ++i)
      FtrlUpdate(g[i], p, &w[i], &nz[2 * i], &nz[2 * i + 1]);
    return true;
  }
};

class SparseFtrlOp final : public FtrlBase {
 public:
  SparseFtrlOp(const OperatorDef& def, Workspace* ws) : FtrlBase(def, ws, 4) {}
  bool RunOnDevice() override {
    const Tensor& var = Input(0);
    const std::vector<int64_t> rows = IntValues(Input(2), "indices");
    const Tensor& grad = Input(3);
    C2_ENFORCE(var.ndim() >= 1, "var must have at least one dimension, got a 0-d tensor");
    const int64_t row = var.numel() / std::max<int64_t>(var.dim(0), 1);
    C2_ENFORCE(grad.IsType<float>() && grad.numel() == static_cast<int64_t>(rows.size()) * row,
               "grad must hold one float row of ", row, " values per index (", rows.size(),
               " indices), got ", grad.DebugString());
    for (size_t i = 0; i < rows.size(); ++i) {
      C2_ENFORCE(rows[i] >= 0 && rows[i] < var.dim(0), "index ", rows[i], " at position ", i,
                 " out of range for var ", Tensor::DimsString(var.dims()));
    }
    float *w, *nz;
    const FtrlParams p = Prepare(&w, &nz);
    const float* g = grad.data<float>();
    for (size_t i = 0; i < rows.size(); ++i) {
      for (int64_t j = 0; j < row; ++j) {
        const int64_t k = rows[i] * row + j;
        FtrlUpdate(g[i * row + j], p, &w[k], &nz[2 * k], &nz[2 * k + 1]);
      }
    }
    return true;
  }
};

}  // namespace

REGISTER_CPU_OPERATOR(Ftrl, FtrlOp);
REGISTER_CPU_OPERATOR(Ftrl_ENGINE_SIMD, FtrlOp);
OPERATOR_SCHEMA(Ftrl)
    .NumInputs(3, 4)
    .NumOutputs(2)
    .AllowInplace({{0, 0}, {1, 1}})
    .Arg("alpha", "learning rate (default 0.005)")
    .Arg("beta", "(default 1.0)")
    .Arg("lambda1", "L1 strength (default 0.001)")
    .Arg("lambda2", "L2 strength (default 0.001)")
    .Input(0, "var", "float parameter")
    .Input(1, "nz", "float (var.shape + [2]): n and z of each element")
    .Input(2, "grad", "float, var's shape")
    .Input(3, "alpha", "optional one-element float replacing the alpha argument")
    .Output(0, "var", "the updated parameter")
    .Output(1, "nz", "the updated state")
    .SetDoc("FTRL-Proximal update of a dense parameter.");
REGISTER_GRADIENT(Ftrl, ShouldNotDoGradient);

REGISTER_CPU_OPERATOR(SparseFtrl, SparseFtrlOp);
REGISTER_CPU_OPERATOR(SparseFtrl_ENGINE_SIMD, SparseFtrlOp);
OPERATOR_SCHEMA(SparseFtrl)
    .NumInputs(4, 5)
    .NumOutputs(2)
    .EnforceInplace({{0, 0}, {1, 1}})
    .Arg("alpha", "learning rate (default 0.005)")
    .Arg("beta", "(default 1.0)")
    .Arg("lambda1", "L1 strength (default 0.001)")
    .Arg("lambda2", "L2 strength (default 0.001)")
    .Input(0, "var", "float parameter")
    .Input(1, "nz", "float (var.shape + [2]): n and z of each element")
    .Input(2, "indices", "int32/int64 rows of var")
    .Input(3, "grad", "float, one var row per index")
    .Input(4, "alpha", "optional one-element float replacing the alpha argument")
    .Output(0, "var", "the updated parameter")
    .Output(1, "nz", "the updated state")
    .SetDoc("FTRL-Proximal update of the indexed rows of a parameter.");
REGISTER_GRADIENT(SparseFtrl, ShouldNotDoGradient);

}  // namespace caffe2
