// The CUDA momentum update shared by MomentumSGD / MomentumSGDUpdate (momentum_sgd_op.cu) and
// FP16MomentumSGDUpdate / FP32MomentumSGDUpdate (fp16_momentum_sgd_op.cu). The math runs in float.
// The learning rate is read on the device (LearningRate writes it there); one fed on the host is
// copied first.
#pragma once

#include <cuda_fp16.h>

#include "core/cuda/cuda_context.h"
#include "core/cuda/cuda_launch.h"
#include "core/operator.h"
#include "operators/common/half_cuda.cuh"
#include "operators/sgd/sgd_util_cuda.h"

namespace caffe2 {

// Every element is read before it is written, so any output may alias its input.
// skip (nullable): the found_nonfinite flag of dynamic loss scaling; when true nothing changes.
template <class T>
__global__ void MomentumKernel(int64_t n, const T* g, const T* m, const float* lr, float momentum,
                               float weight_decay, bool nesterov, T* ng, T* nm, const T* p, T* np,
                               const bool* skip) {
  const float rate = *lr;
  if (skip && *skip) {
    C2_CUDA_KERNEL_LOOP(i, n) {
      ng[i] = g[i];
      nm[i] = m[i];
      if (np) np[i] = p[i];
    }
    return;
  }
  C2_CUDA_KERNEL_LOOP(i, n) {
    const float pi = p ? ToCompute(p[i]) : 0.f;
    const float gi = ToCompute(g[i]) + weight_decay * pi;
    const float mi = ToCompute(m[i]);
    float mnew;
    const float step = MomentumUpdate(gi, mi, rate, momentum, nesterov, &mnew);
    ng[i] = FromCompute<T>(step);
    nm[i] = FromCompute<T>(mnew);
    if (np) np[i] = FromCompute<T>(pi - step);
  }
}

// T: the tensors' element type; kWithDecay: the FP16/FP32 variants (weight_decay, 4 inputs).
template <class T, bool kWithDecay>
class CudaMomentumSGDOp final : public Operator<CUDAContext> {
 public:
  CudaMomentumSGDOp(const OperatorDef& def, Workspace* ws)
      : Operator<CUDAContext>(def, ws),
        momentum_(GetSingleArgument<float>("momentum", 0.f)),
        weight_decay_(kWithDecay ? GetSingleArgument<float>("weight_decay", 0.f) : 0.f),
        nesterov_(GetSingleArgument<int>("nesterov", 0) != 0) {}

  bool RunOnDevice() override {
    using D = typename CudaStorage<T>::type;
    const Tensor& grad = Input(0);
    const Tensor& moment = Input(1);
    const float* lr = DeviceLearningRate(Input(2), device(), &lr_on_device_);
    const bool update_param = InputSize() >= 4;
    const bool* skip = nullptr;
    if (kWithDecay && InputSize() == 5) {
      const Tensor& flag = OnDevice(Input(4), device(), &skip_on_device_);
      C2_ENFORCE(flag.numel() == 1 && flag.IsType<bool>(), "skip must be one bool, got ",
                 flag.DebugString());
      skip = flag.data<bool>();
    }
    for (int i : {0, 1, 3}) {
      if (i == 3 && !update_param) continue;
      C2_ENFORCE(Input(i).IsType<T>(), "input ", i, " ('", debug_def().input(i), "') must be a ",
                 TypeMeta::Make<T>().name, " tensor, got ", Input(i).DebugString());
    }
    CheckSameShape(grad, "grad", moment, "moment");
    Tensor* ng = Output(0);
    Tensor* nm = Output(1);
    ng->ResizeLike(grad);
    nm->ResizeLike(moment);
    const D* p = nullptr;
    D* np = nullptr;
    if (update_param) {
      CheckSameShape(grad, "grad", Input(3), "param");
      Tensor* param_out = Output(2);
      if (!IsInputOutputAlias(3, 2)) param_out->ResizeLike(Input(3));
      p = reinterpret_cast<const D*>(Input(3).template data<T>());
      np = reinterpret_cast<D*>(param_out->template mutable_data<T>());
    }
    const int64_t n = grad.numel();
    D* ngd = reinterpret_cast<D*>(ng->template mutable_data<T>());
    D* nmd = reinterpret_cast<D*>(nm->template mutable_data<T>());
    if (n == 0) return true;
    MomentumKernel<D><<<CudaBlocks(n), kCudaThreadsPerBlock, 0, context_.stream()>>>(
        n, reinterpret_cast<const D*>(grad.template data<T>()),
        reinterpret_cast<const D*>(moment.template data<T>()), lr, momentum_, weight_decay_,
        nesterov_, ngd, nmd, p, np, skip);
    C2_CUDA_KERNEL_LAUNCH_CHECK();
    return true;
  }

 private:
  float momentum_;
  float weight_decay_;
  bool nesterov_;
  Tensor lr_on_device_;
  Tensor skip_on_device_;
};

}  // namespace caffe2
