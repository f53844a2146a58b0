#include "operators/conv/conv_op.h"

#include <algorithm>

#include <Eigen/Core>

#include "core/gradient.h"
#include "core/op_alias.h"
#include "operators/common/gemm.h"
#include "operators/common/input_checks.h"
#include "operators/common/parallel_for.h"
#include "operators/common/scratch_buffer.h"
#include "operators/conv/conv_pool_schema.h"
#include "operators/conv/im2col.h"

namespace caffe2 {

ConvShape CheckConvShapes(const ConvPoolArgs& args, const std::vector<int64_t>& x,
                          const std::vector<int64_t>& w) {
  ConvShape s;
  s.g = args.Resolve(x);
  const bool nchw = s.g.order == StorageOrder::NCHW;
  CheckFilterRank(w, x);
  s.N = s.g.N;
  s.C = s.g.C;
  s.M = w[0];
  s.group = args.group();
  const int64_t wc = nchw ? w[1] : w.back();
  C2_ENFORCE(wc * s.group == s.C, "X ", Tensor::DimsString(x), " has ", s.C,
             " channels but filter ", Tensor::DimsString(w), " expects ", wc,
             s.group > 1 ? MakeString(" per group x group ", s.group, " = ", wc * s.group)
                         : std::string());
  C2_ENFORCE(s.M % s.group == 0, "filter ", Tensor::DimsString(w), " has ", s.M,
             " output channels, not divisible by group ", s.group);
  CheckFilterKernel(w, s.g);
  s.Cg = s.C / s.group;
  s.Mg = s.M / s.group;
  s.K = s.g.kernel_size();
  s.I = s.g.in_image_size();
  s.P = s.g.out_image_size();
  return s;
}

namespace {

using RowMajor = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
using ConstMap = Eigen::Map<const RowMajor>;
using Map = Eigen::Map<RowMajor>;
using ConstVec = Eigen::Map<const Eigen::VectorXf>;
using Vec = Eigen::Map<Eigen::VectorXf>;

// Hands out consecutive pieces of one scratch buffer.
class Carver {
 public:
  explicit Carver(float* base) : next_(base) {}
  float* Take(size_t n) {
    float* p = next_;
    next_ += n;
    return p;
  }

 private:
  float* next_;
};

// NCHW with fewer images than workers (batch-1 inference): the work of each image is split instead,
// im2col and col2im over channels, the GEMMs over rows.
void ForwardNCHWSplitImage(const ConvShape& s, const ConvPoolGeometry::Dims3& d3, bool direct,
                           int workers, const float* x, const float* w, const float* bias,
                           float* col, float* y) {
  for (int64_t n = 0; n < s.N; ++n) {
    for (int64_t grp = 0; grp < s.group; ++grp) {
      const float* xg = x + (n * s.C + grp * s.Cg) * s.I;
      if (!direct) {
        ParallelFor(s.Cg, workers, [&](int64_t c0, int64_t c1, int) {
          Im2ColNCHW(xg + c0 * s.I, c1 - c0, d3, col + c0 * s.K * s.P);
        });
      }
      ConstMap cols(direct ? xg : col, s.CgK(), s.P);
      const float* wg = w + grp * s.Mg * s.CgK();
      float* yg = y + (n * s.M + grp * s.Mg) * s.P;
      ParallelFor(s.Mg, workers, [&](int64_t m0, int64_t m1, int) {
        Map(yg + m0 * s.P, m1 - m0, s.P).noalias() =
            ConstMap(wg + m0 * s.CgK(), m1 - m0, s.CgK()) * cols;
        if (bias) {
          Map(yg + m0 * s.P, m1 - m0, s.P).colwise() += ConstVec(bias + grp * s.Mg + m0, m1 - m0);
        }
      });
    }
  }
}

void BackwardNCHWSplitImage(const ConvShape& s, const ConvPoolGeometry::Dims3& d3, bool direct,
                            int workers, const float* x, const float* w, const float* dy,
                            float* col, float* dcol, float* dw, float* db, float* dx) {
  for (int64_t n = 0; n < s.N; ++n) {
    const float* dyn = dy + n * s.M * s.P;
    for (int64_t grp = 0; grp < s.group; ++grp) {
      const float* xg = x + (n * s.C + grp * s.Cg) * s.I;
      if (!direct) {
        ParallelFor(s.Cg, workers, [&](int64_t c0, int64_t c1, int) {
          Im2ColNCHW(xg + c0 * s.I, c1 - c0, d3, col + c0 * s.K * s.P);
        });
      }
      ConstMap cols(direct ? xg : col, s.CgK(), s.P);
      const float* dyg = dyn + grp * s.Mg * s.P;
      ConstMap wg(w + grp * s.Mg * s.CgK(), s.Mg, s.CgK());
      ParallelFor(s.Mg, workers, [&](int64_t m0, int64_t m1, int) {
        Map(dw + (grp * s.Mg + m0) * s.CgK(), m1 - m0, s.CgK()).noalias() +=
            ConstMap(dyg + m0 * s.P, m1 - m0, s.P) * cols.transpose();
      });
      if (!dx) continue;
      float* dxg = dx + (n * s.C + grp * s.Cg) * s.I;
      // Channel c owns rows [c*K, (c+1)*K) of the column gradient and plane c of dX.
      ParallelFor(s.Cg, workers, [&](int64_t c0, int64_t c1, int) {
        ConstMap dyg_map(dyg, s.Mg, s.P);
        if (direct) {
          Map(dxg + c0 * s.I, c1 - c0, s.P).noalias() =
              wg.middleCols(c0, c1 - c0).transpose() * dyg_map;
          return;
        }
        float* rows = dcol + c0 * s.K * s.P;
        Map(rows, (c1 - c0) * s.K, s.P).noalias() =
            wg.middleCols(c0 * s.K, (c1 - c0) * s.K).transpose() * dyg_map;
        std::fill(dxg + c0 * s.I, dxg + c1 * s.I, 0.f);
        Col2ImNCHW(rows, c1 - c0, d3, dxg + c0 * s.I);
      });
    }
    if (db) Vec(db, s.M) += ConstMap(dyn, s.M, s.P).rowwise().sum();
  }
}

void ForwardIm2col(const ConvShape& s, const float* x, const float* w, const float* bias,
                   float* y) {
  const bool direct = s.g.IsPointwise();
  const ConvPoolGeometry::Dims3 d3 = s.g.As3D();

  if (s.g.order == StorageOrder::NHWC && direct) {
    // One GEMM over all images: Y (N*P, M) = X (N*P, C) W^T.
    const int64_t rows = s.N * s.P;
    ParallelFor(rows, KernelWorkers(rows, s.Flops()), [&](int64_t b, int64_t e, int) {
      Map yb(y + b * s.M, e - b, s.M);
      yb.noalias() = ConstMap(x + b * s.C, e - b, s.C) * ConstMap(w, s.M, s.C).transpose();
      if (bias) yb.rowwise() += ConstVec(bias, s.M).transpose();
    });
    return;
  }

  if (s.g.order == StorageOrder::NCHW && s.N < MaxKernelThreads()) {
    const int workers = KernelWorkers(std::max(s.Cg, s.Mg), s.Flops());
    if (workers > 1) {
      ScratchBuffer scratch(direct ? 0 : s.CgK() * s.P);
      ForwardNCHWSplitImage(s, d3, direct, workers, x, w, bias, direct ? nullptr : scratch.data(),
                            y);
      return;
    }
  }
  const int workers = KernelWorkers(s.N, s.Flops());
  ParallelFor(s.N, workers, [&](int64_t b, int64_t e, int) {
    ScratchBuffer scratch(direct ? 0 : s.CgK() * s.P);
    float* col = direct ? nullptr : scratch.data();
    for (int64_t n = b; n < e; ++n) {
      if (s.g.order == StorageOrder::NCHW) {
        for (int64_t grp = 0; grp < s.group; ++grp) {
          const float* xg = x + (n * s.C + grp * s.Cg) * s.I;
          if (!direct) Im2ColNCHW(xg, s.Cg, d3, col);
          CpuSgemm(false, false, s.Mg, s.P, s.CgK(), 1.f, w + grp * s.Mg * s.CgK(), s.CgK(),
                   direct ? xg : col, s.P, 0.f, y + (n * s.M + grp * s.Mg) * s.P, s.P);
        }
        if (bias) Map(y + n * s.M * s.P, s.M, s.P).colwise() += ConstVec(bias, s.M);
      } else {
        Im2ColNHWC(x + n * s.I * s.C, s.C, d3, col);
        Map yn(y + n * s.P * s.M, s.P, s.M);
        yn.noalias() = ConstMap(col, s.P, s.CgK()) * ConstMap(w, s.M, s.CgK()).transpose();
        if (bias) yn.rowwise() += ConstVec(bias, s.M).transpose();
      }
    }
  });
}

void BackwardIm2col(const ConvShape& s, const float* x, const float* w, const float* dy, float* dw,
                    float* db, float* dx) {
  std::fill(dw, dw + s.M * s.CgK(), 0.f);
  if (db) std::fill(db, db + s.M, 0.f);
  if (s.N * s.M * s.P == 0) {
    if (dx) std::fill(dx, dx + s.N * s.C * s.I, 0.f);
    return;
  }
  const bool direct = s.g.IsPointwise();
  const ConvPoolGeometry::Dims3 d3 = s.g.As3D();
  const int64_t wsize = s.M * s.CgK();
  const bool nhwc_rows = s.g.order == StorageOrder::NHWC && direct;
  // NHWC 1x1 runs over rows of all images at once; everything else over images.
  const int64_t items = nhwc_rows ? s.N * s.P : s.N;
  if (s.g.order == StorageOrder::NCHW && s.N < MaxKernelThreads()) {
    const int split = KernelWorkers(std::max(s.Cg, s.Mg), s.Flops() * (dx ? 2 : 1));
    if (split > 1) {
      const size_t col_size = direct ? 0 : s.CgK() * s.P;
      ScratchBuffer scratch(2 * col_size);
      BackwardNCHWSplitImage(s, d3, direct, split, x, w, dy, scratch.data(),
                             scratch.data() + col_size, dw, db, dx);
      return;
    }
  }
  const int workers = KernelWorkers(items, s.Flops() * (dx ? 2 : 1));
  // Per worker: columns, column gradient and (but for worker 0) partial sums of dfilter and dbias.
  const size_t col_size = direct ? 0 : s.CgK() * s.P;
  std::vector<ScratchBuffer> scratch;
  scratch.reserve(workers);
  for (int i = 0; i < workers; ++i) scratch.emplace_back(2 * col_size + (i ? wsize + s.M : 0));

  ParallelFor(items, workers, [&](int64_t b, int64_t e, int worker) {
    Carver carve(scratch[worker].data());
    float* col = carve.Take(col_size);
    float* dcol = carve.Take(col_size);
    // Worker 0 accumulates straight into the outputs, the others into partial sums added at the
    // end.
    float* dwp = worker == 0 ? dw : carve.Take(wsize);
    float* dbp = !db ? nullptr : worker == 0 ? db : carve.Take(s.M);
    if (worker != 0) {
      std::fill(dwp, dwp + wsize, 0.f);
      if (dbp) std::fill(dbp, dbp + s.M, 0.f);
    }
    if (nhwc_rows) {
      ConstMap dyr(dy + b * s.M, e - b, s.M);
      ConstMap xr(x + b * s.C, e - b, s.C);
      Map(dwp, s.M, s.C).noalias() += dyr.transpose() * xr;
      if (dbp) Vec(dbp, s.M) += dyr.colwise().sum().transpose();
      if (dx) Map(dx + b * s.C, e - b, s.C).noalias() = dyr * ConstMap(w, s.M, s.C);
      return;
    }
    for (int64_t n = b; n < e; ++n) {
      if (s.g.order == StorageOrder::NCHW) {
        const float* dyn = dy + n * s.M * s.P;
        for (int64_t grp = 0; grp < s.group; ++grp) {
          const float* xg = x + (n * s.C + grp * s.Cg) * s.I;
          if (!direct) Im2ColNCHW(xg, s.Cg, d3, col);
          ConstMap dyg(dyn + grp * s.Mg * s.P, s.Mg, s.P);
          ConstMap wg(w + grp * s.Mg * s.CgK(), s.Mg, s.CgK());
          Map(dwp + grp * s.Mg * s.CgK(), s.Mg, s.CgK()).noalias() +=
              dyg * ConstMap(direct ? xg : col, s.CgK(), s.P).transpose();
          if (dx) {
            float* dxg = dx + (n * s.C + grp * s.Cg) * s.I;
            if (direct) {
              Map(dxg, s.Cg, s.P).noalias() = wg.transpose() * dyg;
            } else {
              Map(dcol, s.CgK(), s.P).noalias() = wg.transpose() * dyg;
              std::fill(dxg, dxg + s.Cg * s.I, 0.f);
              Col2ImNCHW(dcol, s.Cg, d3, dxg);
            }
          }
        }
        if (dbp) Vec(dbp, s.M) += ConstMap(dyn, s.M, s.P).rowwise().sum();
      } else {
        Im2ColNHWC(x + n * s.I * s.C, s.C, d3, col);
        ConstMap dyn(dy + n * s.P * s.M, s.P, s.M);
        Map(dwp, s.M, s.CgK()).noalias() += dyn.transpose() * ConstMap(col, s.P, s.CgK());
        if (dbp) Vec(dbp, s.M) += dyn.colwise().sum().transpose();
        if (dx) {
          Map(dcol, s.P, s.CgK()).noalias() = dyn * ConstMap(w, s.M, s.CgK());
          float* dxn = dx + n * s.I * s.C;
          std::fill(dxn, dxn + s.I * s.C, 0.f);
          Col2ImNHWC(dcol, s.C, d3, dxn);
        }
      }
    }
  });
  for (int worker = 1; worker < std::min<int64_t>(workers, items); ++worker) {
    const float* p = scratch[worker].data() + 2 * col_size;
    Vec(dw, wsize) += ConstVec(p, wsize);
    if (db) Vec(db, s.M) += ConstVec(p + wsize, s.M);
  }
}

}  // namespace

ConvOp::ConvOp(const OperatorDef& def, Workspace* ws, bool relu)
    : Operator<CPUContext>(def, ws), args_(ArgumentHelper(def)), relu_(relu) {}

void ReluInPlace(float* y, int64_t n) {
  for (int64_t i = 0; i < n; ++i) y[i] = y[i] > 0.f ? y[i] : 0.f;
}

bool ConvOp::RunOnDevice() {
  const Tensor& X = Input(0);
  const Tensor& W = Input(1);
  CheckFloat(X, "X");
  CheckFloat(W, "filter");
  const ConvShape s = CheckConvShapes(args_, X.dims(), W.dims());
  const float* bias = nullptr;
  if (InputSize() == 3) {
    const Tensor& b = Input(2);
    C2_ENFORCE(b.IsType<float>() && b.numel() == s.M, "bias ", Tensor::DimsString(b.dims()),
               " must hold ", s.M, " floats, one per output channel of filter ",
               Tensor::DimsString(W.dims()));
    bias = b.data<float>();
  }
  Tensor* Y = Output(0);
  Y->Resize(s.g.OutputDims(s.M));
  float* y = Y->mutable_data<float>();
  if (Y->numel() == 0) return true;
  Compute(s, X.data<float>(), W.data<float>(), bias, y);
  if (relu_ && !ComputeAppliesRelu()) ReluInPlace(y, Y->numel());
  return true;
}

void ConvOp::Compute(const ConvShape& s, const float* x, const float* w, const float* bias,
                     float* y) {
  ForwardIm2col(s, x, w, bias, y);
}

ConvGradientOp::ConvGradientOp(const OperatorDef& def, Workspace* ws)
    : Operator<CPUContext>(def, ws),
      args_(ArgumentHelper(def)),
      no_bias_(GetSingleArgument<int>("no_bias", 0) != 0) {
  CheckConvGradientOutputCount(*this, no_bias_);
}

bool ConvGradientOp::RunOnDevice() {
  const Tensor& X = Input(0);
  const Tensor& W = Input(1);
  const Tensor& dY = Input(2);
  CheckFloat(X, "X");
  CheckFloat(W, "filter");
  CheckFloat(dY, "dY");
  const ConvShape s = CheckConvShapes(args_, X.dims(), W.dims());
  const std::vector<int64_t> y_dims = s.g.OutputDims(s.M);
  CheckGradientOutputShape(dY, y_dims);
  const int dx_index = no_bias_ ? 1 : 2;
  Tensor* dW = Output(0);
  dW->ResizeLike(W);
  float* dw = dW->mutable_data<float>();
  float* db = nullptr;
  if (!no_bias_) {
    Tensor* dB = Output(1);
    dB->Resize(s.M);
    db = dB->mutable_data<float>();
  }
  float* dx = nullptr;
  if (OutputSize() > dx_index) {
    Tensor* dX = Output(dx_index);
    dX->ResizeLike(X);
    dx = dX->mutable_data<float>();
  }
  const float* x = X.data<float>();
  const float* w = W.data<float>();
  const float* dy = dY.data<float>();
  if (dY.numel() == 0) {
    ConvGradientOp::Compute(s, x, w, dy, dw, db, dx);  // zeros, whatever the engine
  } else {
    Compute(s, x, w, dy, dw, db, dx);
  }
  return true;
}

void ConvGradientOp::Compute(const ConvShape& s, const float* x, const float* w, const float* dy,
                             float* dw, float* db, float* dx) {
  BackwardIm2col(s, x, w, dy, dw, db, dx);
}

namespace {

class GetConvGradient final : public GradientMakerBase {
  using GradientMakerBase::GradientMakerBase;
  std::vector<OperatorDef> GetGradientDefs() override {
    const bool with_bias = def_.input_size() == 3;
    const bool dx = ArgumentHelper(def_).GetSingleArgument<int>("no_gradient_to_input", 0) == 0;
    std::vector<std::string> outputs{GI(1)};
    if (with_bias) outputs.push_back(GI(2));
    if (dx) outputs.push_back(GI(0));
    std::vector<Argument> args;
    if (!with_bias) args.push_back(MakeArgument<int>("no_bias", 1));
    return SingleGradientDef(def_.type() + "Gradient", "", {I(0), I(1), GO(0)}, outputs, args);
  }
};

TensorShape MakeShape(const std::vector<int64_t>& dims, TensorProto::DataType type) {
  TensorShape t;
  t.set_data_type(type);
  for (int64_t d : dims) t.add_dims(d);
  return t;
}

std::vector<TensorShape> ConvGradientInference(const OperatorDef& def,
                                               const std::vector<TensorShape>& in) {
  const bool no_bias = ArgumentHelper(def).GetSingleArgument<int>("no_bias", 0) != 0;
  const TensorShape& x = in.at(0);
  const TensorShape& w = in.at(1);
  std::vector<TensorShape> out{w};
  if (!no_bias) out.push_back(MakeShape({w.dims(0)}, w.data_type()));
  if (def.output_size() > static_cast<int>(out.size())) out.push_back(x);
  return out;
}

}  // namespace

std::vector<TensorShape> ConvInference(const OperatorDef& def, const std::vector<TensorShape>& in) {
  const ConvShape s =
      CheckConvShapes(ConvPoolArgs(ArgumentHelper(def)), DimsOf(in.at(0)), DimsOf(in.at(1)));
  return {MakeShape(s.g.OutputDims(s.M), in[0].data_type())};
}

OpSchema::Cost ConvCost(const OperatorDef& def, const std::vector<TensorShape>& in) {
  const ConvShape s =
      CheckConvShapes(ConvPoolArgs(ArgumentHelper(def)), DimsOf(in.at(0)), DimsOf(in.at(1)));
  const uint64_t x = s.N * s.C * s.I, w = s.M * s.Cg * s.K, y = s.N * s.M * s.P;
  const bool bias = in.size() == 3;
  OpSchema::Cost c;
  c.flops = static_cast<uint64_t>(s.Flops()) + (bias ? y : 0);
  c.bytes_moved = sizeof(float) * (x + w + y + (bias ? s.M : 0));
  c.params_bytes = sizeof(float) * (w + (bias ? s.M : 0));
  return c;
}

REGISTER_CPU_OPERATOR(Conv, ConvOp);
REGISTER_CPU_OPERATOR(ConvGradient, ConvGradientOp);
REGISTER_CPU_OPERATOR(Conv_ENGINE_EIGEN, ConvOp);
REGISTER_CPU_OPERATOR(ConvGradient_ENGINE_EIGEN, ConvGradientOp);

OPERATOR_SCHEMA(Conv)
    .NumInputs(2, 3)
    .NumOutputs(1)
    .TensorInference(ConvInference)
    .CostInference(ConvCost)
    .SetDoc(
        "Convolution of X with filter, plus an optional bias: NCHW with 1 to 3 spatial dims and "
        "channel groups, or NHWC with group 1. The window arguments (kernel, stride, dilation, "
        "pads) each have a scalar form for every spatial dim, an _h/_w form for 2-D inputs and a "
        "list form with one value per spatial dim; forms of one quantity given together must "
        "agree.")
    .Arg("group",
         "(int, default 1) channel groups: filter row m sees only the C / group input channels of "
         "its group; NCHW only, and no dilation")
    .Arg("no_bias",
         "(int, default 0) passed by brew.conv when the op has no bias input; the kernel follows "
         "the inputs")
    .Arg("no_gradient_to_input",
         "(int, default 0) read by the gradient maker: 1 leaves out dX, so ConvGradient outputs "
         "only [dfilter, dbias]")
    .Input(0, "X", "input (N, C, spatial...) or (N, spatial..., C)")
    .Input(1, "filter", "(M, C / group, kernel...) or (M, kernel..., C)")
    .Input(2, "bias", "optional (M)")
    .Output(0, "Y", "(N, M, out...) or (N, out..., M)");
static OpSchema& c2_conv_args [[maybe_unused]] =
    AddCudnnConvArgs(AddConvPoolArgs(c2_op_schema_Conv));
OPERATOR_SCHEMA(ConvGradient)
    .NumInputs(3)
    .NumOutputs(1, 3)
    .TensorInference(ConvGradientInference)
    .SetDoc("The gradient of Conv: [X, filter, dY] -> [dfilter, dbias?, dX?], with Conv's args.")
    .Arg("group", "(int, default 1) the forward op's channel groups")
    .Arg("no_bias",
         "(int, default 0) set by the gradient maker when the forward op had no bias: the outputs "
         "are then [dfilter, dX?]");
static OpSchema& c2_conv_gradient_args [[maybe_unused]] =
    AddCudnnConvArgs(AddConvPoolArgs(c2_op_schema_ConvGradient));

REGISTER_GRADIENT(Conv, GetConvGradient);

// Upstream's names for the same op, on every device and engine, with its schema and gradient.
REGISTER_OPERATOR_ALIAS(Conv1D, Conv);
REGISTER_OPERATOR_ALIAS(Conv2D, Conv);
REGISTER_OPERATOR_ALIAS(Conv3D, Conv);

}  // namespace caffe2
