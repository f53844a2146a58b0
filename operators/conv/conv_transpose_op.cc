#include "operators/conv/conv_transpose_op.h"

#include <algorithm>
#include <utility>

#include <Eigen/Core>

#include "core/gpu_fallback_declarations.h"
#include "core/gradient.h"
#include "operators/common/input_checks.h"
#include "operators/common/parallel_for.h"
#include "operators/common/scratch_buffer.h"
#include "operators/conv/conv_pool_schema.h"
#include "operators/conv/im2col.h"

namespace caffe2 {
namespace {

using RowMajor = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
using ConstMap = Eigen::Map<const RowMajor>;
using Map = Eigen::Map<RowMajor>;
using ConstVec = Eigen::Map<const Eigen::VectorXf>;
using Vec = Eigen::Map<Eigen::VectorXf>;

// Per image X is C x I (or I x C) and Y is M x P (or P x M); a group's filter is Cg x (Mg * K).
// `cols` is the conv geometry that maps Y to X (in = Y's spatial dims, out = X's), which im2col and
// col2im walk.
struct TransposeShape {
  ConvPoolGeometry g;
  ConvPoolGeometry::Dims3 cols;
  int64_t N, C, M, group, Cg, Mg, K, I, P;
  bool direct;
  int64_t MgK() const { return Mg * K; }
  double Flops() const { return 2.0 * N * C * I * Mg * K; }
};

TransposeShape CheckShapes(const ConvPoolArgs& args, const std::vector<int64_t>& x,
                           const std::vector<int64_t>& w) {
  TransposeShape s;
  s.g = args.ResolveTranspose(x);
  const bool nchw = s.g.order == StorageOrder::NCHW;
  CheckFilterRank(w, x);
  s.N = s.g.N;
  s.C = s.g.C;
  s.group = args.group();
  C2_ENFORCE(w[0] == s.C, "X ", Tensor::DimsString(x), " has ", s.C, " channels but filter ",
             Tensor::DimsString(w), " expects ", w[0]);
  C2_ENFORCE(s.C % s.group == 0, "X ", Tensor::DimsString(x), " has ", s.C,
             " channels, not divisible by group ", s.group);
  s.M = (nchw ? w[1] : w.back()) * s.group;
  CheckFilterKernel(w, s.g);
  s.Cg = s.C / s.group;
  s.Mg = s.M / s.group;
  s.K = s.g.kernel_size();
  s.I = s.g.in_image_size();
  s.P = s.g.out_image_size();
  s.cols = s.g.As3D();
  std::swap(s.cols.in, s.cols.out);
  s.direct = s.g.IsPointwise() &&
             std::all_of(s.g.adj.begin(), s.g.adj.end(), [](int a) { return a == 0; });
  return s;
}

}  // namespace

ConvTransposeOp::ConvTransposeOp(const OperatorDef& def, Workspace* ws)
    : Operator<CPUContext>(def, ws), args_(ArgumentHelper(def)) {}

bool ConvTransposeOp::RunOnDevice() {
  const Tensor& X = Input(0);
  const Tensor& W = Input(1);
  CheckFloat(X, "X");
  CheckFloat(W, "filter");
  const TransposeShape s = CheckShapes(args_, X.dims(), W.dims());
  const float* bias = nullptr;
  if (InputSize() == 3) {
    const Tensor& b = Input(2);
    C2_ENFORCE(b.IsType<float>() && b.numel() == s.M, "bias ", Tensor::DimsString(b.dims()),
               " must hold ", s.M, " floats, one per output channel");
    bias = b.data<float>();
  }
  Tensor* Y = Output(0);
  Y->Resize(s.g.OutputDims(s.M));
  float* y = Y->mutable_data<float>();
  if (Y->numel() == 0) return true;
  const float* x = X.data<float>();
  const float* w = W.data<float>();
  const bool nchw = s.g.order == StorageOrder::NCHW;

  if (!nchw && s.direct) {
    const int64_t rows = s.N * s.I;
    ParallelFor(rows, KernelWorkers(rows, s.Flops()), [&](int64_t b, int64_t e, int) {
      Map yb(y + b * s.M, e - b, s.M);
      yb.noalias() = ConstMap(x + b * s.C, e - b, s.C) * ConstMap(w, s.C, s.M);
      if (bias) yb.rowwise() += ConstVec(bias, s.M).transpose();
    });
    return true;
  }
  const int workers = KernelWorkers(s.N, s.Flops());
  ParallelFor(s.N, workers, [&](int64_t b, int64_t e, int) {
    ScratchBuffer scratch(s.direct ? 0 : s.MgK() * s.I);
    float* col = s.direct ? nullptr : scratch.data();
    for (int64_t n = b; n < e; ++n) {
      if (nchw) {
        for (int64_t grp = 0; grp < s.group; ++grp) {
          ConstMap xg(x + (n * s.C + grp * s.Cg) * s.I, s.Cg, s.I);
          ConstMap wg(w + grp * s.Cg * s.MgK(), s.Cg, s.MgK());
          float* yg = y + (n * s.M + grp * s.Mg) * s.P;
          if (s.direct) {
            Map(yg, s.Mg, s.P).noalias() = wg.transpose() * xg;
          } else {
            Map(col, s.MgK(), s.I).noalias() = wg.transpose() * xg;
            std::fill(yg, yg + s.Mg * s.P, 0.f);
            Col2ImNCHW(col, s.Mg, s.cols, yg);
          }
        }
        if (bias) Map(y + n * s.M * s.P, s.M, s.P).colwise() += ConstVec(bias, s.M);
      } else {
        Map(col, s.I, s.MgK()).noalias() =
            ConstMap(x + n * s.I * s.C, s.I, s.C) * ConstMap(w, s.C, s.MgK());
        float* yn = y + n * s.P * s.M;
        std::fill(yn, yn + s.P * s.M, 0.f);
        Col2ImNHWC(col, s.M, s.cols, yn);
        if (bias) Map(yn, s.P, s.M).rowwise() += ConstVec(bias, s.M).transpose();
      }
    }
  });
  return true;
}

ConvTransposeGradientOp::ConvTransposeGradientOp(const OperatorDef& def, Workspace* ws)
    : Operator<CPUContext>(def, ws),
      args_(ArgumentHelper(def)),
      no_bias_(GetSingleArgument<int>("no_bias", 0) != 0) {
  CheckConvGradientOutputCount(*this, no_bias_);
}

bool ConvTransposeGradientOp::RunOnDevice() {
  const Tensor& X = Input(0);
  const Tensor& W = Input(1);
  const Tensor& dY = Input(2);
  CheckFloat(X, "X");
  CheckFloat(W, "filter");
  CheckFloat(dY, "dY");
  const TransposeShape s = CheckShapes(args_, X.dims(), W.dims());
  const std::vector<int64_t> y_dims = s.g.OutputDims(s.M);
  CheckGradientOutputShape(dY, y_dims);
  const int dx_index = no_bias_ ? 1 : 2;
  Tensor* dW = Output(0);
  dW->ResizeLike(W);
  float* dw = dW->mutable_data<float>();
  std::fill(dw, dw + dW->numel(), 0.f);
  float* db = nullptr;
  if (!no_bias_) {
    Tensor* dB = Output(1);
    dB->Resize(s.M);
    db = dB->mutable_data<float>();
    std::fill(db, db + s.M, 0.f);
  }
  float* dx = nullptr;
  if (OutputSize() > dx_index) {
    Tensor* dX = Output(dx_index);
    dX->ResizeLike(X);
    dx = dX->mutable_data<float>();
    std::fill(dx, dx + X.numel(), 0.f);
  }
  if (X.numel() == 0) return true;
  const float* x = X.data<float>();
  const float* w = W.data<float>();
  const float* dy = dY.data<float>();
  const bool nchw = s.g.order == StorageOrder::NCHW;
  const int64_t wsize = W.numel();
  const bool rows_mode = !nchw && s.direct;
  const int64_t items = rows_mode ? s.N * s.I : s.N;
  const int workers = KernelWorkers(items, s.Flops() * (dx ? 2 : 1));
  // Per worker: columns and (but for worker 0) partial sums of dfilter and dbias.
  const size_t col_size = s.direct ? 0 : s.MgK() * s.I;
  std::vector<ScratchBuffer> scratch;
  scratch.reserve(workers);
  for (int i = 0; i < workers; ++i) scratch.emplace_back(col_size + (i ? wsize + s.M : 0));

  ParallelFor(items, workers, [&](int64_t b, int64_t e, int worker) {
    float* buf = scratch[worker].data();
    float* col = buf;
    float* dwp = worker ? buf + col_size : dw;
    float* dbp = !db ? nullptr : worker ? buf + col_size + wsize : db;
    if (worker) {
      std::fill(dwp, dwp + wsize, 0.f);
      if (dbp) std::fill(dbp, dbp + s.M, 0.f);
    }
    if (rows_mode) {
      ConstMap dyr(dy + b * s.M, e - b, s.M);
      ConstMap xr(x + b * s.C, e - b, s.C);
      Map(dwp, s.C, s.M).noalias() += xr.transpose() * dyr;
      if (dbp) Vec(dbp, s.M) += dyr.colwise().sum().transpose();
      if (dx) Map(dx + b * s.C, e - b, s.C).noalias() = dyr * ConstMap(w, s.C, s.M).transpose();
      return;
    }
    for (int64_t n = b; n < e; ++n) {
      if (nchw) {
        const float* dyn = dy + n * s.M * s.P;
        for (int64_t grp = 0; grp < s.group; ++grp) {
          const float* dyg = dyn + grp * s.Mg * s.P;
          if (!s.direct) Im2ColNCHW(dyg, s.Mg, s.cols, col);
          ConstMap cg(s.direct ? dyg : col, s.MgK(), s.I);
          ConstMap xg(x + (n * s.C + grp * s.Cg) * s.I, s.Cg, s.I);
          ConstMap wg(w + grp * s.Cg * s.MgK(), s.Cg, s.MgK());
          Map(dwp + grp * s.Cg * s.MgK(), s.Cg, s.MgK()).noalias() += xg * cg.transpose();
          if (dx) Map(dx + (n * s.C + grp * s.Cg) * s.I, s.Cg, s.I).noalias() = wg * cg;
        }
        if (dbp) Vec(dbp, s.M) += ConstMap(dyn, s.M, s.P).rowwise().sum();
      } else {
        const float* dyn = dy + n * s.P * s.M;
        Im2ColNHWC(dyn, s.M, s.cols, col);
        ConstMap cn(col, s.I, s.MgK());
        ConstMap xn(x + n * s.I * s.C, s.I, s.C);
        Map(dwp, s.C, s.MgK()).noalias() += xn.transpose() * cn;
        if (dbp) Vec(dbp, s.M) += ConstMap(dyn, s.P, s.M).colwise().sum().transpose();
        if (dx)
          Map(dx + n * s.I * s.C, s.I, s.C).noalias() = cn * ConstMap(w, s.C, s.MgK()).transpose();
      }
    }
  });
  for (int worker = 1; worker < workers; ++worker) {
    const float* p = scratch[worker].data() + col_size;
    Vec(dw, wsize) += ConstVec(p, wsize);
    if (db) Vec(db, s.M) += ConstVec(p + wsize, s.M);
  }
  return true;
}

namespace {

class GetConvTransposeGradient final : public GradientMakerBase {
  using GradientMakerBase::GradientMakerBase;
  std::vector<OperatorDef> GetGradientDefs() override {
    const bool with_bias = def_.input_size() == 3;
    const bool dx = ArgumentHelper(def_).GetSingleArgument<int>("no_gradient_to_input", 0) == 0;
    std::vector<std::string> outputs{GI(1)};
    if (with_bias) outputs.push_back(GI(2));
    if (dx) outputs.push_back(GI(0));
    std::vector<Argument> args;
    if (!with_bias) args.push_back(MakeArgument<int>("no_bias", 1));
    return SingleGradientDef("ConvTransposeGradient", "", {I(0), I(1), GO(0)}, outputs, args);
  }
};

std::vector<TensorShape> ConvTransposeInference(const OperatorDef& def,
                                                const std::vector<TensorShape>& in) {
  const TransposeShape s =
      CheckShapes(ConvPoolArgs(ArgumentHelper(def)), DimsOf(in.at(0)), DimsOf(in.at(1)));
  TensorShape y;
  y.set_data_type(in[0].data_type());
  for (int64_t d : s.g.OutputDims(s.M)) y.add_dims(d);
  return {y};
}

std::vector<TensorShape> ConvTransposeGradientInference(const OperatorDef& def,
                                                        const std::vector<TensorShape>& in) {
  const bool no_bias = ArgumentHelper(def).GetSingleArgument<int>("no_bias", 0) != 0;
  std::vector<TensorShape> out{in.at(1)};
  if (!no_bias) {
    const TransposeShape s =
        CheckShapes(ConvPoolArgs(ArgumentHelper(def)), DimsOf(in.at(0)), DimsOf(in.at(1)));
    TensorShape b;
    b.set_data_type(in[1].data_type());
    b.add_dims(s.M);
    out.push_back(b);
  }
  if (def.output_size() > static_cast<int>(out.size())) out.push_back(in.at(0));
  return out;
}

}  // namespace

REGISTER_CPU_OPERATOR(ConvTranspose, ConvTransposeOp);
REGISTER_GPU_FALLBACK(ConvTranspose);  // CUDA runs the CPU kernel
REGISTER_CPU_OPERATOR(ConvTransposeGradient, ConvTransposeGradientOp);
REGISTER_GPU_FALLBACK(ConvTransposeGradient);  // CUDA runs the CPU kernel

OPERATOR_SCHEMA(ConvTranspose)
    .NumInputs(2, 3)
    .NumOutputs(1)
    .TensorInference(ConvTransposeInference)
    .SetDoc(
        "Transposed convolution (the input gradient of Conv used as a forward op): each input "
        "element scatters filter-weighted copies into a window of Y, so out = (in - 1) * stride + "
        "dilation * (kernel - 1) + 1 + adj - pad_head - pad_tail. legacy_pad VALID and SAME mean "
        "no pads; CAFFE_LEGACY_POOLING is an error.")
    .Arg("group",
         "(int, default 1) channel groups: input channel c feeds only the M / group outputs of its "
         "group; NCHW only, and no dilation")
    .Arg("no_gradient_to_input",
         "(int, default 0) read by the gradient maker: 1 leaves out dX, so ConvTransposeGradient "
         "outputs only [dfilter, dbias]")
    .Input(0, "X", "(N, C, in...) or (N, in..., C)")
    .Input(1, "filter", "(C, M / group, kernel...) or (C, kernel..., M)")
    .Input(2, "bias", "optional (M)")
    .Output(0, "Y", "(N, M, out...) or (N, out..., M)");
static OpSchema& c2_conv_transpose_args [[maybe_unused]] =
    AddConvTransposeArgs(AddConvPoolArgs(c2_op_schema_ConvTranspose));
OPERATOR_SCHEMA(ConvTransposeGradient)
    .NumInputs(3)
    .NumOutputs(1, 3)
    .TensorInference(ConvTransposeGradientInference)
    .SetDoc(
        "The gradient of ConvTranspose: [X, filter, dY] -> [dfilter, dbias?, dX?], with "
        "ConvTranspose's args.")
    .Arg("group", "(int, default 1) the forward op's channel groups")
    .Arg("no_bias",
         "(int, default 0) set by the gradient maker when the forward op had no bias: the outputs "
         "are then [dfilter, dX?]");
static OpSchema& c2_conv_transpose_gradient_args [[maybe_unused]] =
    AddConvTransposeArgs(AddConvPoolArgs(c2_op_schema_ConvTransposeGradient));
REGISTER_GRADIENT(ConvTranspose, GetConvTransposeGradient);

}  // namespace caffe2
