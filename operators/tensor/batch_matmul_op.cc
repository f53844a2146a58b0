// BatchMatMul: [A, B] -> [Y], Y[b] = op(A[b]) op(B[b]) over the leading batch dims (spec ops §1.3);
// op transposes the last two dims when trans_a / trans_b is set. Without broadcast A and B have
// rank
// >= 2 and equal batch dims. With broadcast=1 the NumPy matmul rules apply: a 1-D A is a row, a 1-D
// B a column (their unit dim is dropped from Y) and batch dims broadcast. float.
// Gradient (not with broadcast): two BatchMatMul ops, e.g. for no transposes
//   dA = BatchMatMul(dY, B, trans_b=1), dB = BatchMatMul(A, dY, trans_a=1).
#include <Eigen/Core>

#include "core/gradient.h"
#include "operators/tensor/batch_matmul_op.h"
#include "operators/tensor/matmul_gradient.h"
#include "operators/tensor/tensor_util.h"

namespace caffe2 {
namespace {

using RowMajor = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
using ConstMap = Eigen::Map<const RowMajor>;

class BatchMatMulOp final : public Operator<CPUContext> {
 public:
  BatchMatMulOp(const OperatorDef& def, Workspace* ws)
      : Operator<CPUContext>(def, ws),
        trans_a_(GetSingleArgument<int>("trans_a", 0) != 0),
        trans_b_(GetSingleArgument<int>("trans_b", 0) != 0),
        broadcast_(GetSingleArgument<int>("broadcast", 0) != 0) {}

  bool RunOnDevice() override {
    const Tensor& A = Input(0);
    const Tensor& B = Input(1);
    C2_ENFORCE(A.IsType<float>() && B.IsType<float>(), "A and B must be float, got ", A.meta().name,
               " and ", B.meta().name);
    const BatchMatMulPlan plan =
        PlanBatchMatMul(A.dims(), B.dims(), trans_a_, trans_b_, broadcast_);
    const int64_t M = plan.M, K = plan.K, N = plan.N;
    Tensor* Y = Output(0);
    Y->Resize(plan.out_dims);
    float* y = Y->mutable_data<float>();
    const float* a = A.data<float>();
    const float* b = B.data<float>();
    for (int64_t t = 0; t < plan.count; ++t) {
      int64_t oa, ob;
      plan.Offsets(t, &oa, &ob);
      ConstMap ma(a + oa * M * K, trans_a_ ? K : M, trans_a_ ? M : K);
      ConstMap mb(b + ob * K * N, trans_b_ ? N : K, trans_b_ ? K : N);
      Eigen::Map<RowMajor> my(y + t * M * N, M, N);
      if (trans_a_ && trans_b_) {
        my.noalias() = ma.transpose() * mb.transpose();
      } else if (trans_a_) {
        my.noalias() = ma.transpose() * mb;
      } else if (trans_b_) {
        my.noalias() = ma * mb.transpose();
      } else {
        my.noalias() = ma * mb;
      }
    }
    return true;
  }

 private:
  bool trans_a_, trans_b_, broadcast_;
};

class GetBatchMatMulGradient final : public GradientMakerBase {
  using GradientMakerBase::GradientMakerBase;
  bool CopyArguments() const override { return false; }
  std::vector<OperatorDef> GetGradientDefs() override {
    ArgumentHelper args(Def());
    C2_ENFORCE(!args.GetSingleArgument<int>("broadcast", 0),
               "[BatchMatMul] the gradient is not available with broadcast=1");
    const std::string names[3] = {I(0), I(1), GO(0)};
    const std::string outs[2] = {GI(0), GI(1)};
    std::vector<OperatorDef> ops;
    const auto specs = ProductGradientSpecs(args.GetSingleArgument<int>("trans_a", 0) != 0,
                                            args.GetSingleArgument<int>("trans_b", 0) != 0);
    for (int i = 0; i < 2; ++i) {
      const auto& s = specs[i];
      auto def = SingleGradientDef(
          "BatchMatMul", "", {names[s.x], names[s.y]}, {outs[i]},
          {MakeArgument<int>("trans_a", s.trans_x), MakeArgument<int>("trans_b", s.trans_y)});
      ops.push_back(def[0]);
    }
    return ops;
  }
};

// Shapes without broadcast (equal batch dims); with broadcast the shape is left unknown.
std::vector<TensorShape> BatchMatMulInference(const OperatorDef& def,
                                              const std::vector<TensorShape>& in) {
  ArgumentHelper args(def);
  TensorShape out = in[0];
  const int na = in[0].dims_size(), nb = in[1].dims_size();
  if (args.GetSingleArgument<int>("broadcast", 0) || na < 2 || na != nb) {
    out.set_unknown_shape(true);
    return {out};
  }
  const bool ta = args.GetSingleArgument<int>("trans_a", 0) != 0;
  const bool tb = args.GetSingleArgument<int>("trans_b", 0) != 0;
  out.set_dims(na - 2, in[0].dims(ta ? na - 1 : na - 2));
  out.set_dims(na - 1, in[1].dims(tb ? nb - 2 : nb - 1));
  return {out};
}

}  // namespace

REGISTER_CPU_OPERATOR(BatchMatMul, BatchMatMulOp);
OPERATOR_SCHEMA(BatchMatMul)
    .NumInputs(2)
    .NumOutputs(1)
    .TensorInference(BatchMatMulInference)
    .Arg("trans_a", "Transpose the last two dims of A")
    .Arg("trans_b", "Transpose the last two dims of B")
    .Arg("broadcast", "NumPy matmul broadcasting (0)")
    .Arg("use_scratch", "Accepted for compatibility; unused")
    .SetDoc("Batched matrix product over the leading dims.");
REGISTER_GRADIENT(BatchMatMul, GetBatchMatMulGradient);

}  // namespace caffe2
