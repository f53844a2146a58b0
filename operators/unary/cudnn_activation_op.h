// The cuDNN engine of the activations Relu, Sigmoid and Tanh (relu_op_cudnn.cc,
// sigmoid_op_cudnn.cc, tanh_op_cudnn.cc register it under Type_ENGINE_CUDNN and
// TypeGradient_ENGINE_CUDNN; the plain CUDA kernels are the elementwise functors of <op>_op.cu).
// The math is the CPU ops':
//   Relu     Y = max(X, 0)            ReluGradient     [Y, dY] -> dX = dY where Y > 0, else 0
//   Sigmoid  Y = 1 / (1 + exp(-X))    SigmoidGradient  [Y, dY] -> dX = dY * Y * (1 - Y)
//   Tanh     Y = tanh(X)              TanhGradient     [Y, dY] -> dX = dY * (1 - Y^2)
// float or float16, any shape (described to cuDNN as (1, 1, 1, numel)). Y may be X and dX may be dY
// (cuDNN's activation routines work in place). The gradients read only Y, so Y is passed to cuDNN
// as both its y and its x (each of these activations' derivatives is a function of y; for Relu, y >
// 0 exactly where x > 0).
#pragma once

#include "core/cuda/cuda_context.h"
#include "core/operator.h"
#include "operators/common/cudnn_descriptors.h"

namespace caffe2 {

template <cudnnActivationMode_t kMode>
class CudnnActivationBase : public Operator<CUDAContext> {
 public:
  CudnnActivationBase(const OperatorDef& def, Workspace* ws) : Operator<CUDAContext>(def, ws) {
    C2_CUDNN_CHECK(cudnnSetActivationDescriptor(act_desc_, kMode, CUDNN_NOT_PROPAGATE_NAN, 0.0));
  }

 protected:
  // Describes n values; false when there are none.
  bool Describe(int64_t n, cudnnDataType_t type) {
    if (n == 0) return false;
    Set4dDescriptor(desc_, type, 1, 1, 1, n);
    return true;
  }

  CudnnTensorDescriptor desc_;
  CudnnActivationDescriptor act_desc_;
};

template <cudnnActivationMode_t kMode>
class CudnnActivationOp final : public CudnnActivationBase<kMode> {
 public:
  using CudnnActivationBase<kMode>::CudnnActivationBase;

  bool RunOnDevice() override {
    const Tensor& X = this->Input(0);
    const cudnnDataType_t type = CudnnDataType(X, "X");
    Tensor* Y = this->Output(0);
    Y->ResizeLike(X);
    void* y = Y->raw_mutable_data(X.meta());
    if (!this->Describe(X.numel(), type)) return true;
    const float one = 1.f, zero = 0.f;
    C2_CUDNN_CHECK(cudnnActivationForward(this->context_.cudnn_handle(), this->act_desc_, &one,
                                          this->desc_, X.raw_data(), &zero, this->desc_, y));
    return true;
  }
};

template <cudnnActivationMode_t kMode>
class CudnnActivationGradientOp final : public CudnnActivationBase<kMode> {
 public:
  using CudnnActivationBase<kMode>::CudnnActivationBase;

  bool RunOnDevice() override {
    const Tensor& Y = this->Input(0);
    const Tensor& dY = this->Input(1);
    const cudnnDataType_t type = CudnnDataType(Y, "Y");
    C2_ENFORCE(Y.dims() == dY.dims() && Y.meta() == dY.meta(), "Y ", Y.DebugString(), " and dY ",
               dY.DebugString(), " must have the same shape and type");
    Tensor* dX = this->Output(0);
    dX->ResizeLike(Y);
    void* dx = dX->raw_mutable_data(Y.meta());
    if (!this->Describe(Y.numel(), type)) return true;
    const float one = 1.f, zero = 0.f;
    C2_CUDNN_CHECK(cudnnActivationBackward(this->context_.cudnn_handle(), this->act_desc_, &one,
                                           this->desc_, Y.raw_data(), this->desc_, dY.raw_data(),
                                           this->desc_, Y.raw_data(), &zero, this->desc_, dx));
    return true;
  }
};

}  // namespace caffe2
