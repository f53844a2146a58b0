// The cuDNN engine of MaxPool and AveragePool and their gradients (the math and arguments are
// pool_op.h's), registered for CUDA as MaxPool, AveragePool and their Gradient types, each also
// with _ENGINE_CUDNN (the 1D/2D/3D names are aliases, pool_op.cc).
//
//   MaxPool      CUDNN_POOLING_MAX (CUDNN_POOLING_MAX_DETERMINISTIC with deterministic=1)
//   AveragePool  CUDNN_POOLING_AVERAGE_COUNT_EXCLUDE_PADDING: the mean of the in-bounds elements,
//   as
//                the CPU kernel
// X float or float16, NCHW or NHWC, 1 to 3 spatial dims. cuDNN pools without dilation and pads both
// sides of a dim alike; a geometry it cannot run exactly goes to the CPU kernel (GPUFallbackOp):
// dilation > 1, pads that FitsSymmetricPads rejects (e.g. CAFFE_LEGACY_POOLING's enlarged tail
// pad), or a pad as large as the kernel (a window entirely in the padding, which the CPU op defines
// as 0). Known difference: for ties in a max window the CPU gradient goes to every maximal element,
// cuDNN's to one of them.
#include <memory>

#include "core/cuda/gpu_fallback_op.h"
#include "operators/common/cudnn_descriptors.h"
#include "operators/conv/pool_op.h"

namespace caffe2 {
namespace {

template <PoolKind kKind>
class CudnnPoolOpBase : public Operator<CUDAContext> {
 public:
  CudnnPoolOpBase(const OperatorDef& def, Workspace* ws)
      : Operator<CUDAContext>(def, ws),
        args_(ArgumentHelper(def)),
        deterministic_(GetSingleArgument<bool>("deterministic", false)) {}

 protected:
  static bool CudnnCanRun(const ConvPoolGeometry& g) {
    for (int i = 0; i < g.spatial_dims(); ++i) {
      if (g.dilation[i] != 1 || g.pad_head[i] >= g.kernel[i]) return false;
    }
    return g.FitsSymmetricPads();
  }

  void SetDescriptors(const ConvPoolGeometry& g, cudnnDataType_t type) {
    const bool nhwc = g.order == StorageOrder::NHWC;
    SetImageDescriptor(x_desc_, type, g.N, g.C, g.in, nhwc);
    SetImageDescriptor(y_desc_, type, g.N, g.C, g.out, nhwc);
    const int n = std::max(2, g.spatial_dims());
    std::vector<int> window(n, 1), pad(n, 0), stride(n, 1);
    for (int i = 0; i < g.spatial_dims(); ++i) {
      window[i] = g.kernel[i];
      pad[i] = g.pad_head[i];
      stride[i] = g.stride[i];
    }
    const cudnnPoolingMode_t mode = kKind == PoolKind::kAverage
                                        ? CUDNN_POOLING_AVERAGE_COUNT_EXCLUDE_PADDING
                                    : deterministic_ ? CUDNN_POOLING_MAX_DETERMINISTIC
                                                     : CUDNN_POOLING_MAX;
    C2_CUDNN_CHECK(cudnnSetPoolingNdDescriptor(pool_desc_, mode, CUDNN_NOT_PROPAGATE_NAN, n,
                                               window.data(), pad.data(), stride.data()));
  }

  bool RunFallback() { return fallback_.Run(*this); }

  ConvPoolArgs args_;
  bool deterministic_;
  CudnnTensorDescriptor x_desc_, y_desc_;
  CudnnPoolingDescriptor pool_desc_;

 private:
  LazyGPUFallback fallback_;
};

// [X] -> [Y].
template <PoolKind kKind>
class CudnnPoolOp final : public CudnnPoolOpBase<kKind> {
 public:
  using CudnnPoolOpBase<kKind>::CudnnPoolOpBase;

  bool RunOnDevice() override {
    const Tensor& X = this->Input(0);
    const cudnnDataType_t type = CudnnDataType(X, "X");
    const ConvPoolGeometry g = this->args_.Resolve(X.dims());
    if (!this->CudnnCanRun(g)) return this->RunFallback();
    Tensor* Y = this->Output(0);
    Y->Resize(g.OutputDims(g.C));
    void* y = Y->raw_mutable_data(X.meta());
    if (Y->numel() == 0) return true;
    this->SetDescriptors(g, type);
    const float one = 1.f, zero = 0.f;
    C2_CUDNN_CHECK(cudnnPoolingForward(this->context_.cudnn_handle(), this->pool_desc_, &one,
                                       this->x_desc_, X.raw_data(), &zero, this->y_desc_, y));
    return true;
  }
};

// [X, Y, dY] -> [dX].
template <PoolKind kKind>
class CudnnPoolGradientOp final : public CudnnPoolOpBase<kKind> {
 public:
  using CudnnPoolOpBase<kKind>::CudnnPoolOpBase;

  bool RunOnDevice() override {
    const Tensor& X = this->Input(0);
    const Tensor& Y = this->Input(1);
    const Tensor& dY = this->Input(2);
    const cudnnDataType_t type = CudnnDataType(X, "X");
    C2_ENFORCE(Y.meta() == X.meta() && dY.meta() == X.meta(),
               "X, Y and dY must have one element type, got ", X.meta().name, ", ", Y.meta().name,
               " and ", dY.meta().name);
    const ConvPoolGeometry g = this->args_.Resolve(X.dims());
    const std::vector<int64_t> y_dims = g.OutputDims(g.C);
    CheckPoolGradientShapes(X, Y, dY, y_dims);
    if (!this->CudnnCanRun(g)) return this->RunFallback();
    Tensor* dX = this->Output(0);
    dX->ResizeLike(X);
    void* dx = dX->raw_mutable_data(X.meta());
    if (dX->numel() == 0) return true;
    if (dY.numel() == 0) {
      C2_CUDA_CHECK(cudaMemsetAsync(dx, 0, dX->nbytes(), this->context_.stream()));
      return true;
    }
    this->SetDescriptors(g, type);
    const float one = 1.f, zero = 0.f;
    C2_CUDNN_CHECK(cudnnPoolingBackward(this->context_.cudnn_handle(), this->pool_desc_, &one,
                                        this->y_desc_, Y.raw_data(), this->y_desc_, dY.raw_data(),
                                        this->x_desc_, X.raw_data(), &zero, this->x_desc_, dx));
    return true;
  }
};

using CudnnMaxPoolOp = CudnnPoolOp<PoolKind::kMax>;
using CudnnAveragePoolOp = CudnnPoolOp<PoolKind::kAverage>;
using CudnnMaxPoolGradientOp = CudnnPoolGradientOp<PoolKind::kMax>;
using CudnnAveragePoolGradientOp = CudnnPoolGradientOp<PoolKind::kAverage>;

}  // namespace

REGISTER_CUDA_OPERATOR(MaxPool, CudnnMaxPoolOp);
REGISTER_CUDA_OPERATOR(MaxPool_ENGINE_CUDNN, CudnnMaxPoolOp);
REGISTER_CUDA_OPERATOR(AveragePool, CudnnAveragePoolOp);
REGISTER_CUDA_OPERATOR(AveragePool_ENGINE_CUDNN, CudnnAveragePoolOp);
REGISTER_CUDA_OPERATOR(MaxPoolGradient, CudnnMaxPoolGradientOp);
REGISTER_CUDA_OPERATOR(MaxPoolGradient_ENGINE_CUDNN, CudnnMaxPoolGradientOp);
REGISTER_CUDA_OPERATOR(AveragePoolGradient, CudnnAveragePoolGradientOp);
REGISTER_CUDA_OPERATOR(AveragePoolGradient_ENGINE_CUDNN, CudnnAveragePoolGradientOp);

}  // namespace caffe2
