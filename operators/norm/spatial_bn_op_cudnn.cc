// The cuDNN engine of SpatialBN and SpatialBNGradient (the math, arguments and outputs are
// spatial_bn_op.h's), registered for CUDA as SpatialBN, SpatialBNGradient and both with
// _ENGINE_CUDNN. float only. X is given to cuDNN as (N, C, S, 1) with S the product of the spatial
// dims, in the strides of its order; CUDNN_BATCHNORM_SPATIAL (not the persistent variant, whose
// kernels trade range for speed).
//
// SpatialBN, training:
//   num_batches 1: cudnnBatchNormalizationForwardTraining gives Y, saved_mean and saved_inv_std
//     (cuDNN's resultSaveInvVariance is 1 / sqrt(var + epsilon) of the biased batch variance).
//     cuDNN is not given the running statistics: it would update the variance with the unbiased
//     estimate. A kernel applies the CPU op's update, running = running * momentum + batch * (1 -
//     momentum), recovering the biased variance from the saved inverse std.
//   num_batches > 1: a kernel derives the statistics from the sums/sumsq inputs, then
//     cudnnBatchNormalizationForwardInference normalizes with them.
// SpatialBN, test: cudnnBatchNormalizationForwardInference with the given mean and var.
// Running statistics that are not C floats are zero-filled first, as on the CPU. Y may be X (cuDNN
// then writes a scratch tensor that is copied over X).
// SpatialBNGradient: training with 5 inputs runs cudnnBatchNormalizationBackward on the saved
// statistics; the aggregated case (7 inputs) and test mode use the kernels of spatial_bn_op.cu.
#include <cuda_runtime.h>

#include <string>

#include "core/cuda/cuda_context.h"
#include "core/operator.h"
#include "operators/common/cudnn_descriptors.h"
#include "operators/norm/norm_op_checks.h"
#include "operators/norm/spatial_bn_op.h"
#include "operators/norm/spatial_bn_op_cuda.h"

namespace caffe2 {
namespace {

class CudnnSpatialBNBase : public Operator<CUDAContext> {
 public:
  CudnnSpatialBNBase(const OperatorDef& def, Workspace* ws)
      : Operator<CUDAContext>(def, ws),
        is_test_(GetSingleArgument<int>("is_test", 0) != 0),
        epsilon_(GetSingleArgument<float>("epsilon", 1e-5f)),
        order_(GetSingleArgument<std::string>("order", "NCHW")),
        num_batches_(GetSingleArgument<int>("num_batches", 1)),
        scratch_(context_.device()),
        channel_scratch_(context_.device()) {
    ParseOrderIsNCHW(order_);
    CheckSpatialBNNumBatches(num_batches_);
  }

 protected:
  // Reads the layout of X and describes it and the per-channel vectors for cuDNN.
  ChannelLayout Describe(const Tensor& X) {
    const ChannelLayout l = GetChannelLayout(X, order_);
    if (X.numel() > 0) {
      SetImageDescriptor(x_desc_, CUDNN_DATA_FLOAT, l.N, l.C, {l.S}, !l.nchw);
      C2_CUDNN_CHECK(cudnnDeriveBNTensorDescriptor(bn_desc_, x_desc_, CUDNN_BATCHNORM_SPATIAL));
    }
    return l;
  }

  // A float GPU buffer of n values, per op, reused across calls.
  float* Scratch(Tensor* t, int64_t n) {
    t->Resize(n);
    return t->mutable_data<float>();
  }

  bool is_test_;
  float epsilon_;
  std::string order_;
  int num_batches_;
  Tensor scratch_, channel_scratch_;
  CudnnTensorDescriptor x_desc_, bn_desc_;
};

class CudnnSpatialBNOp final : public CudnnSpatialBNBase {
 public:
  CudnnSpatialBNOp(const OperatorDef& def, Workspace* ws)
      : CudnnSpatialBNBase(def, ws), momentum_(GetSingleArgument<float>("momentum", 0.9f)) {
    CheckSpatialBNArgs(*this, is_test_, epsilon_, momentum_, num_batches_);
  }

  bool RunOnDevice() override {
    const Tensor& X = Input(0);
    const ChannelLayout l = Describe(X);
    const int64_t C = l.C;
    CheckSpatialBNInputs(*this, C, is_test_, num_batches_);
    const float* scale = Input(1).data<float>();
    const float* bias = Input(2).data<float>();
    const bool in_place = IsInputOutputAlias(0, 0);
    Tensor* Y = Output(0);
    cudnnHandle_t h = context_.cudnn_handle();
    cudaStream_t stream = context_.stream();
    const float one = 1.f, zero = 0.f;
    if (is_test_) {
      if (!in_place) Y->ResizeLike(X);
      float* y = in_place ? Scratch(&scratch_, X.numel()) : Y->mutable_data<float>();
      if (X.numel() == 0) return true;
      C2_CUDNN_CHECK(cudnnBatchNormalizationForwardInference(
          h, CUDNN_BATCHNORM_SPATIAL, &one, &zero, x_desc_, X.data<float>(), x_desc_, y, bn_desc_,
          scale, bias, Input(3).data<float>(), Input(4).data<float>(), epsilon_));
      return CopyBack(y, Y, stream);
    }
    double count = static_cast<double>(l.N * l.S) * num_batches_;
    CheckSpatialBNBatch(count, X);
    Tensor* running_mean = Output(1);
    Tensor* running_var = Output(2);
    for (Tensor* r : {running_mean, running_var}) {
      if (r->numel() != C || !r->IsType<float>()) {
        r->Resize(C);
        C2_CUDA_CHECK(cudaMemsetAsync(r->mutable_data<float>(), 0, C * sizeof(float), stream));
      }
    }
    Tensor* saved_mean = Output(3);
    Tensor* saved_inv_std = Output(4);
    saved_mean->Resize(C);
    saved_inv_std->Resize(C);
    float* rm = running_mean->mutable_data<float>();
    float* rv = running_var->mutable_data<float>();
    float* sm = saved_mean->mutable_data<float>();
    float* si = saved_inv_std->mutable_data<float>();
    if (!in_place) Y->ResizeLike(X);
    float* y = in_place ? Scratch(&scratch_, X.numel()) : Y->mutable_data<float>();
    if (X.numel() == 0) return true;  // no channels
    if (num_batches_ == 1) {
      // Factor 1 and null running statistics: cuDNN computes only the batch statistics.
      C2_CUDNN_CHECK(cudnnBatchNormalizationForwardTraining(
          h, CUDNN_BATCHNORM_SPATIAL, &one, &zero, x_desc_, X.data<float>(), x_desc_, y, bn_desc_,
          scale, bias, 1.0, nullptr, nullptr, epsilon_, sm, si));
      SpatialBNRunningUpdateCUDA(C, momentum_, epsilon_, sm, si, rm, rv, stream);
    } else {
      float* batch_var = Scratch(&channel_scratch_, C);
      SpatialBNStatsFromSumsCUDA(C, count, momentum_, epsilon_, Input(5).data<float>(),
                                 Input(6).data<float>(), sm, si, batch_var, rm, rv, stream);
      C2_CUDNN_CHECK(cudnnBatchNormalizationForwardInference(
          h, CUDNN_BATCHNORM_SPATIAL, &one, &zero, x_desc_, X.data<float>(), x_desc_, y, bn_desc_,
          scale, bias, sm, batch_var, epsilon_));
    }
    return CopyBack(y, Y, stream);
  }

 private:
  // Copies the result over Y when it was written to scratch (Y is X).
  bool CopyBack(const float* y, Tensor* Y, cudaStream_t stream) {
    float* dst = Y->mutable_data<float>();
    if (y != dst)
      C2_CUDA_CHECK(cudaMemcpyAsync(dst, y, Y->nbytes(), cudaMemcpyDeviceToDevice, stream));
    return true;
  }

  float momentum_;
};

class CudnnSpatialBNGradientOp final : public CudnnSpatialBNBase {
 public:
  using CudnnSpatialBNBase::CudnnSpatialBNBase;

  bool RunOnDevice() override {
    const Tensor& X = Input(0);
    const Tensor& dY = Input(2);
    const ChannelLayout l = Describe(X);
    const int64_t C = l.C;
    CheckSpatialBNGradientInputs(*this, C, is_test_);
    const float* x = X.data<float>();
    const float* dy = dY.data<float>();
    const float* scale = Input(1).data<float>();
    const float* mean = Input(3).data<float>();
    const bool aggregated = InputSize() == 7 && !is_test_;
    Tensor* dX = Output(0);
    Tensor* dS = Output(1);
    Tensor* dB = Output(2);
    dX->ResizeLike(X);
    dS->Resize(C);
    dB->Resize(C);
    float* dx = dX->mutable_data<float>();
    float* dscale = dS->mutable_data<float>();
    float* dbias = dB->mutable_data<float>();
    cudaStream_t stream = context_.stream();
    const float inv_m = l.N * l.S > 0 ? 1.0f / static_cast<float>(l.N * l.S) : 0.f;
    if (aggregated) {
      // Read the aggregates before writing dscale/dbias: they may be the same blobs.
      SpatialBNScaleCUDA(C, 1.0f / num_batches_, Input(5).data<float>(), dscale, stream);
      SpatialBNScaleCUDA(C, 1.0f / num_batches_, Input(6).data<float>(), dbias, stream);
      SpatialBNBackwardDxCUDA(l.N, C, l.S, l.nchw, false, inv_m, x, dy, scale, mean,
                              Input(4).data<float>(), dscale, dbias, dx, stream);
      return true;
    }
    if (is_test_) {
      float* inv_std = Scratch(&channel_scratch_, C);
      SpatialBNInvStdCUDA(C, epsilon_, Input(4).data<float>(), inv_std, stream);
      SpatialBNBackpropSumsCUDA(l.N, C, l.S, l.nchw, x, dy, mean, inv_std, dscale, dbias, stream);
      SpatialBNBackwardDxCUDA(l.N, C, l.S, l.nchw, true, inv_m, x, dy, scale, mean, inv_std, dscale,
                              dbias, dx, stream);
      return true;
    }
    if (X.numel() == 0) {
      C2_CUDA_CHECK(cudaMemsetAsync(dscale, 0, C * sizeof(float), stream));
      C2_CUDA_CHECK(cudaMemsetAsync(dbias, 0, C * sizeof(float), stream));
      return true;
    }
    const float one = 1.f, zero = 0.f;
    C2_CUDNN_CHECK(cudnnBatchNormalizationBackward(context_.cudnn_handle(), CUDNN_BATCHNORM_SPATIAL,
                                                   &one, &zero, &one, &zero, x_desc_, x, x_desc_,
                                                   dy, x_desc_, dx, bn_desc_, scale, dscale, dbias,
                                                   epsilon_, mean, Input(4).data<float>()));
    return true;
  }
};

}  // namespace

REGISTER_CUDA_OPERATOR(SpatialBN, CudnnSpatialBNOp);
REGISTER_CUDA_OPERATOR(SpatialBN_ENGINE_CUDNN, CudnnSpatialBNOp);
REGISTER_CUDA_OPERATOR(SpatialBNGradient, CudnnSpatialBNGradientOp);
REGISTER_CUDA_OPERATOR(SpatialBNGradient_ENGINE_CUDNN, CudnnSpatialBNGradientOp);

}  // namespace caffe2
