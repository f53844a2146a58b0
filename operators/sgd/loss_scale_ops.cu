// CUDA kernels of UnscaleGradients and UpdateLossScale (contracts in loss_scale_ops.cc). The
// scale, the good-step count and the flag stay on the device, so a training step never waits for
// the host. Inputs fed on the host are copied to the GPU first.
#include <cuda_fp16.h>

#include <memory>
#include <vector>

#include "core/cuda/cuda_context.h"
#include "core/cuda/cuda_launch.h"
#include "operators/common/cuda_inputs.h"
#include "operators/common/half_cuda.cuh"
#include "operators/sgd/loss_scale_ops.h"

namespace caffe2 {
namespace {

template <class T>
__global__ void UnscaleKernel(int64_t n, const float* scale, T* g, bool* found) {
  const float inv_scale = 1.f / *scale;
  C2_CUDA_KERNEL_LOOP(i, n) {
    const float v = ToCompute(g[i]);
    if (!isfinite(v)) *found = true;  // every writer stores the same value
    g[i] = FromCompute<T>(v * inv_scale);
  }
}

class CudaUnscaleGradientsOp final : public Operator<CUDAContext> {
 public:
  using Operator<CUDAContext>::Operator;
  bool RunOnDevice() override {
    const Tensor& scale = OnDevice(Input(0), device(), &scale_on_device_);
    CheckLossScale(scale);
    Tensor* flag = Output(OutputSize() - 1);
    flag->Resize(1);
    bool* found = flag->mutable_data<bool>();
    C2_CUDA_CHECK(cudaMemsetAsync(found, 0, sizeof(bool), context_.stream()));
    for (int i = 1; i < InputSize(); ++i) {
      CheckUnscaleInputs(*this, i);
      CheckOnDevice(Input(i), device(), "gradient '" + debug_def().input(i) + "'");
      Tensor* g = Output(i - 1);
      const int64_t n = g->numel();
      if (n == 0) continue;
      const int blocks = CudaBlocks(n);
      if (g->IsType<float>()) {
        UnscaleKernel<<<blocks, kCudaThreadsPerBlock, 0, context_.stream()>>>(
            n, scale.data<float>(), g->mutable_data<float>(), found);
      } else {
        UnscaleKernel<<<blocks, kCudaThreadsPerBlock, 0, context_.stream()>>>(
            n, scale.data<float>(), MutableStorageData<float16>(g), found);
      }
      C2_CUDA_KERNEL_LAUNCH_CHECK();
    }
    return true;
  }

 private:
  Tensor scale_on_device_;
};

__global__ void UpdateLossScaleKernel(LossScaleArgs args, const bool* found, float* scale,
                                      int64_t* good_steps) {
  StepLossScale(args, *found, scale, good_steps);
}

class CudaUpdateLossScaleOp final : public Operator<CUDAContext> {
 public:
  CudaUpdateLossScaleOp(const OperatorDef& def, Workspace* ws)
      : Operator<CUDAContext>(def, ws), args_(ReadLossScaleArgs(*this)) {}
  bool RunOnDevice() override {
    CheckUpdateLossScaleInputs(*this);
    for (int i = 0; i < 2; ++i) {
      CheckOnDevice(Input(i), device(), "input '" + debug_def().input(i) + "'");
    }
    const Tensor& found = OnDevice(Input(2), device(), &found_on_device_);
    UpdateLossScaleKernel<<<1, 1, 0, context_.stream()>>>(args_, found.data<bool>(),
                                                          Output(0)->mutable_data<float>(),
                                                          Output(1)->mutable_data<int64_t>());
    C2_CUDA_KERNEL_LAUNCH_CHECK();
    return true;
  }

 private:
  LossScaleArgs args_;
  Tensor found_on_device_;
};

}  // namespace

REGISTER_CUDA_OPERATOR(UnscaleGradients, CudaUnscaleGradientsOp);
REGISTER_CUDA_OPERATOR(UpdateLossScale, CudaUpdateLossScaleOp);

}  // namespace caffe2
