// cuBLAS kernels of FC / FCTransposed and their gradients (contracts in fc_op.cc): the same GEMMs
// as the CPU kernels; the bias enters as a rank-1 update with a vector of ones, db as dY^T ones.
// On CUDA X, W, b (and dY) may also all be float16 (fp16 training), computed in float.
#include "core/cuda/cuda_context.h"
#include "core/operator.h"
#include "operators/common/gemm_cuda.h"
#include "operators/nn/fc_shape.h"

namespace caffe2 {
namespace {

DataType CheckTypes(const Tensor& X, const Tensor& W, const Tensor& third, const char* third_name) {
  const DataType type = X.dtype();
  C2_ENFORCE(type == DataType::FLOAT || type == DataType::FLOAT16,
             "FC on CUDA takes float or float16 tensors, got X ", X.meta().name);
  C2_ENFORCE(W.dtype() == type && third.dtype() == type, "X, W and ", third_name,
             " must have the same type, got ", X.meta().name, ", ", W.meta().name, " and ",
             third.meta().name);
  return type;
}

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
    const DataType type = CheckTypes(X, W, b, "b");
    const FCShape s = CheckFCShapes(X, W, axis_, axis_w_, kTransposed);
    C2_ENFORCE(b.numel() == s.N, "b ", Tensor::DimsString(b.dims()), " must hold ", s.N, " values");
    Tensor* Y = Output(0);
    Y->Resize(FCOutputDims(X, axis_, s.N));
    void* y = Y->raw_mutable_data(X.meta());
    // Y = ones(M) b^T, then Y += X op(W).
    CudaGemm(&context_, type, false, false, s.M, s.N, 1, 1.f,
             CudaOnes(&context_, type, s.M, &ones_), 1, b.raw_data(), s.N, 0.f, y, s.N);
    CudaGemm(&context_, type, false, !kTransposed, s.M, s.N, s.K, 1.f, X.raw_data(), s.K,
             W.raw_data(), kTransposed ? s.N : s.K, 1.f, y, s.N);
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
    const DataType type = CheckTypes(X, W, dY, "dY");
    const FCShape s = CheckFCShapes(X, W, axis_, axis_w_, kTransposed);
    CheckFCGradientOutput(dY, s);
    const void* x = X.raw_data();
    const void* dy = dY.raw_data();
    Tensor* dW = Output(0);
    dW->ResizeLike(W);
    void* dw = dW->raw_mutable_data(W.meta());
    if (kTransposed) {
      CudaGemm(&context_, type, true, false, s.K, s.N, s.M, 1.f, x, s.K, dy, s.N, 0.f, dw, s.N);
    } else {
      CudaGemm(&context_, type, true, false, s.N, s.K, s.M, 1.f, dy, s.N, x, s.K, 0.f, dw, s.K);
    }
    Tensor* db = Output(1);
    db->Resize(s.N);
    // db (N x 1) = dY^T (N x M) ones (M x 1)
    CudaGemm(&context_, type, true, false, s.N, 1, s.M, 1.f, dy, s.N,
             CudaOnes(&context_, type, s.M, &ones_), 1, 0.f, db->raw_mutable_data(X.meta()), 1);
    if (OutputSize() == 3) {
      Tensor* dX = Output(2);
      dX->ResizeLike(X);
      CudaGemm(&context_, type, false, kTransposed, s.M, s.K, s.N, 1.f, dy, s.N, W.raw_data(),
               kTransposed ? s.N : s.K, 0.f, dX->raw_mutable_data(X.meta()), s.K);
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
