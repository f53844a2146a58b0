// MatMul: [A, B] -> [Y (M, N)] (spec ops §1.3). A is viewed as a matrix split at axis_a (1) and B
// at axis_b (1), a negative axis counting from the end; trans_a / trans_b transpose those matrices.
// float.
// Gradient: two MatMul ops (matmul_gradient.h) with the axes of their operands; the results are
// the matrix views, so for inputs of rank > 2 they come out 2-D, as upstream.
#include <Eigen/Core>

#include "core/gradient.h"
#include "operators/tensor/matmul_op.h"
#include "operators/tensor/matmul_gradient.h"
#include "operators/tensor/tensor_util.h"

namespace caffe2 {
namespace {

using RowMajor = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
using ConstMap = Eigen::Map<const RowMajor>;

class MatMulOp final : public Operator<CPUContext> {
 public:
  MatMulOp(const OperatorDef& def, Workspace* ws)
      : Operator<CPUContext>(def, ws),
        axis_a_(GetSingleArgument<int>("axis_a", 1)),
        axis_b_(GetSingleArgument<int>("axis_b", 1)),
        trans_a_(GetSingleArgument<int>("trans_a", 0) != 0),
        trans_b_(GetSingleArgument<int>("trans_b", 0) != 0) {}

  bool RunOnDevice() override {
    const Tensor& A = Input(0);
    const Tensor& B = Input(1);
    C2_ENFORCE(A.IsType<float>() && B.IsType<float>(), "A and B must be float, got ", A.meta().name,
               " and ", B.meta().name);
    const MatMulShape m = ComputeMatMulShape(A, B, axis_a_, axis_b_, trans_a_, trans_b_);
    const int64_t ar = m.ar, ac = m.ac, br = m.br, bc = m.bc, M = m.M, N = m.N;
    Tensor* Y = Output(0);
    Y->Resize(M, N);
    ConstMap ma(A.data<float>(), ar, ac);
    ConstMap mb(B.data<float>(), br, bc);
    Eigen::Map<RowMajor> my(Y->mutable_data<float>(), M, N);
    if (trans_a_ && trans_b_) {
      my.noalias() = ma.transpose() * mb.transpose();
    } else if (trans_a_) {
      my.noalias() = ma.transpose() * mb;
    } else if (trans_b_) {
      my.noalias() = ma * mb.transpose();
    } else {
      my.noalias() = ma * mb;
    }
    return true;
  }

 private:
  int axis_a_, axis_b_;
  bool trans_a_, trans_b_;
};

class GetMatMulGradient final : public GradientMakerBase {
  using GradientMakerBase::GradientMakerBase;
  bool CopyArguments() const override { return false; }
  std::vector<OperatorDef> GetGradientDefs() override {
    ArgumentHelper args(Def());
    const std::string names[3] = {I(0), I(1), GO(0)};
    const int axes[3] = {args.GetSingleArgument<int>("axis_a", 1),
                         args.GetSingleArgument<int>("axis_b", 1), 1};
    const std::string outs[2] = {GI(0), GI(1)};
    std::vector<OperatorDef> ops;
    const auto specs = ProductGradientSpecs(args.GetSingleArgument<int>("trans_a", 0) != 0,
                                            args.GetSingleArgument<int>("trans_b", 0) != 0);
    for (int i = 0; i < 2; ++i) {
      const auto& s = specs[i];
      auto def = SingleGradientDef(
          "MatMul", "", {names[s.x], names[s.y]}, {outs[i]},
          {MakeArgument<int>("trans_a", s.trans_x), MakeArgument<int>("trans_b", s.trans_y),
           MakeArgument<int>("axis_a", axes[s.x]), MakeArgument<int>("axis_b", axes[s.y])});
      ops.push_back(def[0]);
    }
    return ops;
  }
};

std::vector<TensorShape> MatMulInference(const OperatorDef& def,
                                         const std::vector<TensorShape>& in) {
  ArgumentHelper args(def);
  TensorShape out;
  out.set_data_type(in[0].data_type());
  const int axes[2] = {args.GetSingleArgument<int>("axis_a", 1),
                       args.GetSingleArgument<int>("axis_b", 1)};
  const bool trans[2] = {args.GetSingleArgument<int>("trans_a", 0) != 0,
                         args.GetSingleArgument<int>("trans_b", 0) != 0};
  int64_t rows[2] = {1, 1}, cols[2] = {1, 1};
  for (int t = 0; t < 2; ++t) {
    const int split = MatMulSplitAxis(axes[t], in[t].dims_size());
    if (split < 0) {
      out.set_unknown_shape(true);
      return {out};
    }
    for (int i = 0; i < in[t].dims_size(); ++i) (i < split ? rows[t] : cols[t]) *= in[t].dims(i);
  }
  out.add_dims(trans[0] ? cols[0] : rows[0]);
  out.add_dims(trans[1] ? rows[1] : cols[1]);
  return {out};
}

}  // namespace

REGISTER_CPU_OPERATOR(MatMul, MatMulOp);
OPERATOR_SCHEMA(MatMul)
    .NumInputs(2)
    .NumOutputs(1)
    .TensorInference(MatMulInference)
    .Arg("axis_a", "A is a matrix split at this axis (1)")
    .Arg("axis_b", "B is a matrix split at this axis (1)")
    .Arg("trans_a", "Transpose A's matrix")
    .Arg("trans_b", "Transpose B's matrix")
    .SetDoc("Matrix product of two tensors viewed as matrices.");
REGISTER_GRADIENT(MatMul, GetMatMulGradient);

}  // namespace caffe2
