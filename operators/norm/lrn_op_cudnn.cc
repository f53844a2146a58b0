// The cuDNN engine of LRN and LRNGradient (the math and arguments are lrn_op.cc's), registered for
// CUDA as LRN, LRNGradient and both with _ENGINE_CUDNN. cuDNN's cross-channel LRN computes
//   y = x * (k + (alpha / n) * sum of x^2 over the n channels centred on x)^(-beta)
// (it divides alpha by the window itself), so size, alpha, beta and bias map to n, alpha, beta and
// k unchanged. X (float or float16) is given as (N, C, S, 1), S the product of the dims after C.
// cuDNN runs order NCHW with one output (no `scale`), size <= CUDNN_LRN_MAX_N (16), bias >=
// CUDNN_LRN_MIN_K (1e-5) and beta >= CUDNN_LRN_MIN_BETA (0.01); everything else runs the CPU kernel
// through GPUFallbackOp (float only).
#include <memory>
#include <string>

#include "core/cuda/gpu_fallback_op.h"
#include "operators/common/cudnn_descriptors.h"

namespace caffe2 {
namespace {

class CudnnLRNBase : public Operator<CUDAContext> {
 public:
  CudnnLRNBase(const OperatorDef& def, Workspace* ws) : Operator<CUDAContext>(def, ws) {
    const int size = GetSingleArgument<int>("size", 0);
    const float alpha = GetSingleArgument<float>("alpha", 0.0f);
    const float beta = GetSingleArgument<float>("beta", 0.0f);
    const float bias = GetSingleArgument<float>("bias", 1.0f);
    const std::string order = GetSingleArgument<std::string>("order", "NCHW");
    C2_ENFORCE(size > 0 && size % 2 == 1, "size must be a positive odd number, got ", size);
    C2_ENFORCE(order == "NCHW" || order == "NHWC", "order must be NCHW or NHWC, got '", order, "'");
    use_cudnn_ = order == "NCHW" && size <= CUDNN_LRN_MAX_N && bias >= CUDNN_LRN_MIN_K &&
                 beta >= CUDNN_LRN_MIN_BETA &&
                 OutputSize() == 1;  // LRNGradient always has one output
    if (use_cudnn_)
      C2_CUDNN_CHECK(
          cudnnSetLRNDescriptor(lrn_desc_, static_cast<unsigned>(size), alpha, beta, bias));
  }

 protected:
  // Describes X as (N, C, S, 1); false when it is empty.
  bool Describe(const Tensor& X, cudnnDataType_t type) {
    C2_ENFORCE(X.ndim() >= 2, "X must have rank >= 2, got ", Tensor::DimsString(X.dims()));
    if (X.numel() == 0) return false;
    const int64_t N = X.dim(0), C = X.dim(1);
    Set4dDescriptor(desc_, type, N, C, X.numel() / (N * C), 1);
    return true;
  }

  bool RunFallback() { return fallback_.Run(*this); }

  bool use_cudnn_;
  CudnnTensorDescriptor desc_;
  CudnnLRNDescriptor lrn_desc_;

 private:
  LazyGPUFallback fallback_;
};

class CudnnLRNOp final : public CudnnLRNBase {
 public:
  using CudnnLRNBase::CudnnLRNBase;

  bool RunOnDevice() override {
    if (!use_cudnn_) return RunFallback();
    const Tensor& X = Input(0);
    const cudnnDataType_t type = CudnnDataType(X, "X");
    Tensor* Y = Output(0);
    Y->ResizeLike(X);
    void* y = Y->raw_mutable_data(X.meta());
    if (!Describe(X, type)) return true;
    const float one = 1.f, zero = 0.f;
    C2_CUDNN_CHECK(cudnnLRNCrossChannelForward(context_.cudnn_handle(), lrn_desc_,
                                               CUDNN_LRN_CROSS_CHANNEL_DIM1, &one, desc_,
                                               X.raw_data(), &zero, desc_, y));
    return true;
  }
};

// [X, Y, dY] -> [dX].
class CudnnLRNGradientOp final : public CudnnLRNBase {
 public:
  using CudnnLRNBase::CudnnLRNBase;

  bool RunOnDevice() override {
    if (!use_cudnn_) return RunFallback();
    const Tensor& X = Input(0);
    const Tensor& Y = Input(1);
    const Tensor& dY = Input(2);
    const cudnnDataType_t type = CudnnDataType(X, "X");
    C2_ENFORCE(Y.dims() == X.dims() && dY.dims() == X.dims() && Y.meta() == X.meta() &&
                   dY.meta() == X.meta(),
               "Y ", Y.DebugString(), " and dY ", dY.DebugString(),
               " must have the shape and type of X ", X.DebugString());
    Tensor* dX = Output(0);
    dX->ResizeLike(X);
    void* dx = dX->raw_mutable_data(X.meta());
    if (!Describe(X, type)) return true;
    const float one = 1.f, zero = 0.f;
    C2_CUDNN_CHECK(cudnnLRNCrossChannelBackward(
        context_.cudnn_handle(), lrn_desc_, CUDNN_LRN_CROSS_CHANNEL_DIM1, &one, desc_, Y.raw_data(),
        desc_, dY.raw_data(), desc_, X.raw_data(), &zero, desc_, dx));
    return true;
  }
};

}  // namespace

REGISTER_CUDA_OPERATOR(LRN, CudnnLRNOp);
REGISTER_CUDA_OPERATOR(LRN_ENGINE_CUDNN, CudnnLRNOp);
REGISTER_CUDA_OPERATOR(LRNGradient, CudnnLRNGradientOp);
REGISTER_CUDA_OPERATOR(LRNGradient_ENGINE_CUDNN, CudnnLRNGradientOp);

}  // namespace caffe2
