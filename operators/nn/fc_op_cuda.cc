// cuBLAS kernels of FC / FCTransposed and their gradients (contracts in fc_op.cc): the same GEMMs
// as the CPU kernels; the bias enters as a rank-1 update with a vector of ones, db as dY^T ones.
#include "core/cuda/cuda_context.h"
#include "core/operator.h"
#include "operators/common/gemm_cuda.h"
#include "operators/nn/fc_shape.h"

namespace caffe2 {
namespace {

template <bool kTransposed>
class CudaFCOp final : public Operator<CUDAContext> {
 public:
  CudaFCOp(const OperatorDef& def, Workspace* ws)
      : Operator<CUDAContext>(def, ws),
        axis_(GetSingleArgument<int>("axis", 1)),
        axis_w_(GetSingleArgument<int>("axis_w", 1)) {}

  bool RunOnDevice() override {
    const Tensor& X = Input(0);
    const Tensor& W = Input(1);
    const Tensor& b = Input(2);
    const FCShape s = CheckFCShapes(X, W, axis_, axis_w_, kTransposed);
    C2_ENFORCE(b.numel() == s.N && b.IsType<float>(), "b ", Tensor::DimsString(b.dims()),
               " must hold ", s.N, " floats");
    Tensor* Y = Output(0);
    Y->Resize(FCOutputDims(X, axis_, s.N));
    float* y = Y->mutable_data<float>();
    // Y = ones(M) b^T, then Y += X op(W).
    CudaSgemm(&context_, false, false, s.M, s.N, 1, 1.f, CudaOnes(&context_, s.M, &ones_), 1,
              b.data<float>(), s.N, 0.f, y, s.N);
    CudaSgemm(&context_, false, !kTransposed, s.M, s.N, s.K, 1.f, X.data<float>(), s.K,
              W.data<float>(), kTransposed ? s.N : s.K, 1.f, y, s.N);
    return true;
  }

 private:
  int axis_, axis_w_;
  Tensor ones_;
};

template <bool kTransposed>
class CudaFCGradientOp final : public Operator<CUDAContext> {
 public:
  CudaFCGradientOp(const OperatorDef& def, Workspace* ws)
      : Operator<CUDAContext>(def, ws),
        axis_(GetSingleArgument<int>("axis", 1)),
        axis_w_(GetSingleArgument<int>("axis_w", 1)) {}

  bool RunOnDevice() override {
    const Tensor& X = Input(0);
    const Tensor& W = Input(1);
    const Tensor& dY = Input(2);
    const FCShape s = CheckFCShapes(X, W, axis_, axis_w_, kTransposed);
    C2_ENFORCE(dY.numel() == s.M * s.N, "dY ", Tensor::DimsString(dY.dims()), " must hold ",
               s.M, " x ", s.N, " values");
    const float* x = X.data<float>();
    const float* dy = dY.data<float>();
    Tensor* dW = Output(0);
    dW->ResizeLike(W);
    if (kTransposed) {
      CudaSgemm(&context_, true, false, s.K, s.N, s.M, 1.f, x, s.K, dy, s.N, 0.f,
                dW->mutable_data<float>(), s.N);
    } else {
      CudaSgemm(&context_, true, false, s.N, s.K, s.M, 1.f, dy, s.N, x, s.K, 0.f,
                dW->mutable_data<float>(), s.K);
    }
    Tensor* db = Output(1);
    db->Resize(s.N);
    CudaSgemv(&context_, true, s.M, s.N, 1.f, dy, CudaOnes(&context_, s.M, &ones_), 0.f,
              db->mutable_data<float>());
    if (OutputSize() == 3) {
      Tensor* dX = Output(2);
      dX->ResizeLike(X);
      CudaSgemm(&context_, false, kTransposed, s.M, s.K, s.N, 1.f, dy, s.N, W.data<float>(),
                kTransposed ? s.N : s.K, 0.f, dX->mutable_data<float>(), s.K);
    }
    return true;
  }

 private:
  int axis_, axis_w_;
  Tensor ones_;
};

}  // namespace

REGISTER_CUDA_OPERATOR(FC, CudaFCOp<false>);
REGISTER_CUDA_OPERATOR(FCGradient, CudaFCGradientOp<false>);
REGISTER_CUDA_OPERATOR(FCTransposed, CudaFCOp<true>);
REGISTER_CUDA_OPERATOR(FCTransposedGradient, CudaFCGradientOp<true>);

}  // namespace caffe2
