// BatchMatMul: [A, B] -> [Y], Y[b] = op(A[b]) op(B[b]) over the leading batch dims (spec ops §1.3);
// op transposes the last two dims when trans_a / trans_b is set. Without broadcast A and B have
// rank
// >= 2 and equal batch dims. With broadcast=1 the NumPy matmul rules apply: a 1-D A is a row, a 1-D
// B a column (their unit dim is dropped from Y) and batch dims broadcast. float.
// Gradient (not with broadcast): two BatchMatMul ops, e.g. for no transposes
//   dA = BatchMatMul(dY, B, trans_b=1), dB = BatchMatMul(A, dY, trans_a=1).
#include <Eigen/Core>

#include "core/gradient.h"
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
    std::vector<int64_t> da = A.dims(), db = B.dims();
    if (!broadcast_) {
      C2_ENFORCE(da.size() >= 2 && da.size() == db.size() &&
                     std::equal(da.begin(), da.end() - 2, db.begin()),
                 "A ", Tensor::DimsString(da), " and B ", Tensor::DimsString(db),
                 " must have rank >= 2 and the same batch dims (or set broadcast=1)");
    }
    C2_ENFORCE(!da.empty() && !db.empty(), "A and B must have at least one dim");
    const bool a_vec = da.size() == 1, b_vec = db.size() == 1;
    if (a_vec) da.insert(da.begin(), 1);
    if (b_vec) db.push_back(1);
    const int64_t M = trans_a_ && !a_vec ? da[da.size() - 1] : da[da.size() - 2];
    const int64_t K = trans_a_ && !a_vec ? da[da.size() - 2] : da[da.size() - 1];
    const int64_t KB = trans_b_ && !b_vec ? db[db.size() - 1] : db[db.size() - 2];
    const int64_t N = trans_b_ && !b_vec ? db[db.size() - 2] : db[db.size() - 1];
    C2_ENFORCE(K == KB, "A ", Tensor::DimsString(A.dims()), " has inner dim ", K, " but B ",
               Tensor::DimsString(B.dims()), " has ", KB, " (trans_a=", trans_a_,
               ", trans_b=", trans_b_, ")");
    // Broadcast batch dims, aligned from the right.
    const size_t ba = da.size() - 2, bb = db.size() - 2, nb = std::max(ba, bb);
    std::vector<int64_t> batch(nb);
    for (size_t i = 0; i < nb; ++i) {
      const int64_t x = i + ba >= nb ? da[i + ba - nb] : 1;
      const int64_t y = i + bb >= nb ? db[i + bb - nb] : 1;
      C2_ENFORCE(x == y || x == 1 || y == 1, "batch dims of A ", Tensor::DimsString(A.dims()),
                 " and B ", Tensor::DimsString(B.dims()), " do not broadcast");
      batch[i] = std::max(x, y);
    }
    std::vector<int64_t> dims = batch;
    if (!a_vec) dims.push_back(M);
    if (!b_vec) dims.push_back(N);
    Tensor* Y = Output(0);
    Y->Resize(dims);
    float* y = Y->mutable_data<float>();
    const float* a = A.data<float>();
    const float* b = B.data<float>();
    int64_t count = 1;
    for (int64_t d : batch) count *= d;
    std::vector<int64_t> idx(nb, 0);
    for (int64_t t = 0; t < count; ++t) {
      int64_t oa = 0, ob = 0, sa = 1, sb = 1;
      for (int i = static_cast<int>(nb) - 1; i >= 0; --i) {
        const int64_t x = static_cast<size_t>(i) + ba >= nb ? da[i + ba - nb] : 1;
        const int64_t z = static_cast<size_t>(i) + bb >= nb ? db[i + bb - nb] : 1;
        oa += (x == 1 ? 0 : idx[i]) * sa;
        ob += (z == 1 ? 0 : idx[i]) * sb;
        sa *= x;
        sb *= z;
      }
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
      for (int i = static_cast<int>(nb) - 1; i >= 0; --i) {
        if (++idx[i] < batch[i]) break;
        idx[i] = 0;
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
