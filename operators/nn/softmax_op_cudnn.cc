// The cuDNN engine of Softmax and SoftmaxGradient (the math is softmax_op.h's), registered for CUDA
// as Softmax, SoftmaxGradient and both with _ENGINE_CUDNN. X (float or float16) is viewed as (N, D)
// at `axis` and given to cuDNN as an (N, D, 1, 1) tensor: CUDNN_SOFTMAX_MODE_INSTANCE normalizes
// each image over its D values, CUDNN_SOFTMAX_ACCURATE subtracts the row max first, as the CPU
// kernel. SoftmaxGradient: [Y, dY] -> [dX], dX = Y * (dY - sum_row(dY * Y)); dX may be dY (cuDNN
// then reads a copy of dY).
#include <cuda_runtime.h>

#include "core/cuda/cuda_context.h"
#include "core/operator.h"
#include "operators/common/cudnn_descriptors.h"
#include "operators/tensor/tensor_util.h"

namespace caffe2 {
namespace {

class CudnnSoftmaxBase : public Operator<CUDAContext> {
 public:
  CudnnSoftmaxBase(const OperatorDef& def, Workspace* ws)
      : Operator<CUDAContext>(def, ws), axis_(GetSingleArgument<int>("axis", 1)) {}

 protected:
  // Describes t as (N, D, 1, 1); false when it is empty (nothing for cuDNN to do).
  bool Describe(const Tensor& t, cudnnDataType_t type) {
    const int ax = CanonicalAxis(axis_, t.ndim());
    if (t.numel() == 0) return false;
    Set4dDescriptor(desc_, type, t.size_to_dim(ax), t.size_from_dim(ax), 1, 1);
    return true;
  }

  int axis_;
  CudnnTensorDescriptor desc_;
};

class CudnnSoftmaxOp final : public CudnnSoftmaxBase {
 public:
  using CudnnSoftmaxBase::CudnnSoftmaxBase;

  bool RunOnDevice() override {
    const Tensor& X = Input(0);
    const cudnnDataType_t type = CudnnDataType(X, "X");
    Tensor* Y = Output(0);
    Y->ResizeLike(X);
    void* y = Y->raw_mutable_data(X.meta());
    if (!Describe(X, type)) return true;
    const float one = 1.f, zero = 0.f;
    C2_CUDNN_CHECK(cudnnSoftmaxForward(context_.cudnn_handle(), CUDNN_SOFTMAX_ACCURATE,
                                       CUDNN_SOFTMAX_MODE_INSTANCE, &one, desc_, X.raw_data(),
                                       &zero, desc_, y));
    return true;
  }
};

class CudnnSoftmaxGradientOp final : public CudnnSoftmaxBase {
 public:
  CudnnSoftmaxGradientOp(const OperatorDef& def, Workspace* ws)
      : CudnnSoftmaxBase(def, ws), dy_copy_(context_.device()) {}

  bool RunOnDevice() override {
    const Tensor& Y = Input(0);
    const Tensor& dY = Input(1);
    const cudnnDataType_t type = CudnnDataType(Y, "Y");
    C2_ENFORCE(Y.dims() == dY.dims() && Y.meta() == dY.meta(), "Y ", Y.DebugString(), " and dY ",
               dY.DebugString(), " must have the same shape and type");
    const void* dy = dY.raw_data();
    if (IsInputOutputAlias(1, 0)) {
      dy_copy_.CopyFrom(dY);
      dy = dy_copy_.raw_data();
    }
    Tensor* dX = Output(0);
    dX->ResizeLike(Y);
    void* dx = dX->raw_mutable_data(Y.meta());
    if (!Describe(Y, type)) return true;
    const float one = 1.f, zero = 0.f;
    C2_CUDNN_CHECK(cudnnSoftmaxBackward(context_.cudnn_handle(), CUDNN_SOFTMAX_ACCURATE,
                                        CUDNN_SOFTMAX_MODE_INSTANCE, &one, desc_, Y.raw_data(),
                                        desc_, dy, &zero, desc_, dx));
    return true;
  }

 private:
  Tensor dy_copy_;
};

}  // namespace

REGISTER_CUDA_OPERATOR(Softmax, CudnnSoftmaxOp);
REGISTER_CUDA_OPERATOR(Softmax_ENGINE_CUDNN, CudnnSoftmaxOp);
REGISTER_CUDA_OPERATOR(SoftmaxGradient, CudnnSoftmaxGradientOp);
REGISTER_CUDA_OPERATOR(SoftmaxGradient_ENGINE_CUDNN, CudnnSoftmaxGradientOp);

}  // namespace caffe2
