// CUDA kernels of Adagrad (dense), SparseAdagrad and RowWiseSparseAdagrad, with the contracts and
// input checks of the CPU ops (adagrad_op.cc). lr is read on the device (a host lr is copied
// first). Every element is read before it is written, so outputs may be their inputs; the sparse
// updates keep the CPU's order of repeated indices (sparse_update_cuda.cuh).
#include "operators/sgd/sparse_update_cuda.cuh"

namespace caffe2 {
namespace {

__global__ void AdagradKernel(int64_t n, const float* p, const float* h, const float* g,
                              const float* lr, float epsilon, float decay, float* np, float* nh) {
  const float rate = *lr;
  C2_CUDA_KERNEL_LOOP(i, n) {
    const float gi = g[i];
    const float hi = decay * h[i] + gi * gi;
    np[i] = p[i] + rate * gi / (sqrtf(hi) + epsilon);
    nh[i] = hi;
  }
}

class CudaAdagradOp final : public Operator<CUDAContext> {
 public:
  CudaAdagradOp(const OperatorDef& def, Workspace* ws)
      : Operator<CUDAContext>(def, ws),
        epsilon_(GetSingleArgument<float>("epsilon", 1e-5f)),
        decay_(GetSingleArgument<float>("decay", 1.0f)) {}
  bool RunOnDevice() override {
    const Tensor& grad = Input(2);
    CheckFloat(grad, "grad");
    CheckStateLikeGrad(Input(0), "param", grad);
    CheckStateLikeGrad(Input(1), "moment", grad);
    const float* lr = DeviceLearningRate(Input(3), device(), &lr_on_device_);
    float* out[2];
    for (int i = 0; i < 2; ++i) {
      Output(i)->ResizeLike(grad);
      out[i] = Output(i)->mutable_data<float>();
    }
    const int64_t n = grad.numel();
    if (n == 0) return true;
    AdagradKernel<<<CudaBlocks(n), kCudaThreadsPerBlock, 0, context_.stream()>>>(
        n, Input(0).data<float>(), Input(1).data<float>(), grad.data<float>(), lr, epsilon_, decay_,
        out[0], out[1]);
    C2_CUDA_KERNEL_LAUNCH_CHECK();
    return true;
  }

 private:
  float epsilon_, decay_;
  Tensor lr_on_device_;
};

// SparseAdagrad: h = decay*h + g^2; param += lr * g / (sqrt(h) + epsilon) on the indexed rows.

struct AdagradUpdate {
  int64_t block;
  const float* g;
  const float* lr;
  float epsilon, decay;
  float* p;
  float* h;
  __device__ void operator()(int64_t row, int64_t k, int64_t j) const {
    const int64_t e = row * block + j;
    const float grad = g[k * block + j];
    const float hi = decay * h[e] + grad * grad;
    h[e] = hi;
    p[e] += *lr * grad / (sqrtf(hi) + epsilon);
  }
  __device__ void skip(int64_t, int64_t) const {}
};

template <bool kRowWise>
class CudaSparseAdagradOp final : public Operator<CUDAContext> {
 public:
  CudaSparseAdagradOp(const OperatorDef& def, Workspace* ws)
      : Operator<CUDAContext>(def, ws),
        epsilon_(GetSingleArgument<float>("epsilon", 1e-5f)),
        decay_(GetSingleArgument<float>("decay", 1.0f)) {}

  bool RunOnDevice() override {
    const Tensor& param = Input(0);
    const Tensor& grad = Input(3);
    CheckFloat(grad, "grad");
    CheckSparseState(param, Input(1), "moment", kRowWise);
    const int64_t block = param.size_from_dim(1);
    const int64_t rows = param.dim(0);
    sorted_.Sort(Input(2), rows, device(), context_.stream());
    CheckSparseGrad(grad, sorted_.count(), block);
    const float* lr = DeviceLearningRate(Input(4), device(), &lr_on_device_);
    float* p = InPlaceOutput(this, &context_, 0, "param");
    float* h = InPlaceOutput(this, &context_, 1, "moment");
    CheckOnDevice(grad, device(), "grad");
    const float* g = grad.data<float>();
    if (kRowWise) {
      LaunchRowWise<false>(sorted_, block, rows, g, lr, 0.0, 0.f, 0.f, decay_, epsilon_, p, nullptr,
                           h, context_.stream());
    } else {
      LaunchRuns(sorted_, block, rows, AdagradUpdate{block, g, lr, epsilon_, decay_, p, h},
                 context_.stream());
    }
    return true;
  }

 private:
  float epsilon_, decay_;
  Tensor lr_on_device_;
  SortedRows sorted_;
};
}  // namespace

REGISTER_CUDA_OPERATOR(Adagrad, CudaAdagradOp);
REGISTER_CUDA_OPERATOR(SparseAdagrad, CudaSparseAdagradOp<false>);
REGISTER_CUDA_OPERATOR(RowWiseSparseAdagrad, CudaSparseAdagradOp<true>);

}  // namespace caffe2
