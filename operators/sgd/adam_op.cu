// CUDA kernels of Adam (dense), SparseAdam and RowWiseSparseAdam, with the contracts and input
// checks of the CPU ops (adam_op.cc). lr is read on the device (a host lr is copied first); the
// iteration counter is a host int64 tensor (copied to the host if it lives on a GPU) from which the
// bias correction is computed. Every element is read before it is written, so outputs may be their
// inputs; the sparse updates keep the CPU's order of repeated indices (sparse_update_cuda.cuh).
#include <cmath>

#include "operators/sgd/sparse_update_cuda.cuh"

namespace caffe2 {
namespace {

__global__ void AdamKernel(int64_t n, const float* p, const float* m1, const float* m2,
                           const float* g, const float* lr, float corr, float beta1, float beta2,
                           float epsilon, float* np, float* nm1, float* nm2) {
  const float step = *lr * corr;
  C2_CUDA_KERNEL_LOOP(i, n) {
    const float gi = g[i];
    const float a = beta1 * m1[i] + (1 - beta1) * gi;
    const float b = beta2 * m2[i] + (1 - beta2) * gi * gi;
    np[i] = p[i] + step * a / (sqrtf(b) + epsilon);
    nm1[i] = a;
    nm2[i] = b;
  }
}

class CudaAdamOp final : public Operator<CUDAContext> {
 public:
  CudaAdamOp(const OperatorDef& def, Workspace* ws)
      : Operator<CUDAContext>(def, ws),
        beta1_(GetSingleArgument<float>("beta1", 0.9f)),
        beta2_(GetSingleArgument<float>("beta2", 0.999f)),
        epsilon_(GetSingleArgument<float>("epsilon", 1e-5f)) {}
  bool RunOnDevice() override {
    const Tensor& grad = Input(3);
    CheckFloat(grad, "grad");
    CheckStateLikeGrad(Input(0), "param", grad);
    CheckStateLikeGrad(Input(1), "m1", grad);
    CheckStateLikeGrad(Input(2), "m2", grad);
    Tensor iter_on_host(Device{kCPU, 0});
    const Tensor& it = OnDevice(Input(5), Device{kCPU, 0}, &iter_on_host);
    const float corr = static_cast<float>(AdamCorrection(beta1_, beta2_, it));
    const float* lr = DeviceLearningRate(Input(4), device(), &lr_on_device_);
    float* out[3];
    for (int i = 0; i < 3; ++i) {
      Output(i)->ResizeLike(grad);
      out[i] = Output(i)->mutable_data<float>();
    }
    const int64_t n = grad.numel();
    if (n == 0) return true;
    AdamKernel<<<CudaBlocks(n), kCudaThreadsPerBlock, 0, context_.stream()>>>(
        n, Input(0).data<float>(), Input(1).data<float>(), Input(2).data<float>(),
        grad.data<float>(), lr, corr, beta1_, beta2_, epsilon_, out[0], out[1], out[2]);
    C2_CUDA_KERNEL_LAUNCH_CHECK();
    return true;
  }

 private:
  float beta1_, beta2_, epsilon_;
  Tensor lr_on_device_;
};

// SparseAdam: m1, m2 updated; param += step * m1 / (sqrt(m2) + epsilon), step = lr * corr.
struct AdamUpdate {
  int64_t block;
  const float* g;
  const float* lr;
  double corr;
  float beta1, beta2, epsilon;
  float* p;
  float* m1;
  float* m2;
  __device__ void operator()(int64_t row, int64_t k, int64_t j) const {
    const int64_t e = row * block + j;
    const float grad = g[k * block + j];
    const float step = static_cast<float>(static_cast<double>(*lr) * corr);
    const float a = beta1 * m1[e] + (1 - beta1) * grad;
    const float b = beta2 * m2[e] + (1 - beta2) * grad * grad;
    m1[e] = a;
    m2[e] = b;
    p[e] += step * a / (sqrtf(b) + epsilon);
  }
  __device__ void skip(int64_t, int64_t) const {}
};

template <bool kRowWise>
class CudaSparseAdamOp final : public Operator<CUDAContext> {
 public:
  CudaSparseAdamOp(const OperatorDef& def, Workspace* ws)
      : Operator<CUDAContext>(def, ws),
        beta1_(GetSingleArgument<float>("beta1", 0.9f)),
        beta2_(GetSingleArgument<float>("beta2", 0.999f)),
        epsilon_(GetSingleArgument<float>("epsilon", 1e-5f)) {}

  bool RunOnDevice() override {
    const Tensor& param = Input(0);
    const Tensor& grad = Input(4);
    CheckFloat(grad, "grad");
    CheckSameShape(param, "param", Input(1), "m1");
    CheckSparseState(param, Input(2), "m2", kRowWise);
    const int64_t block = param.size_from_dim(1);
    const int64_t rows = param.dim(0);
    sorted_.Sort(Input(3), rows, device(), context_.stream());
    CheckSparseGrad(grad, sorted_.count(), block);
    const float* lr = DeviceLearningRate(Input(5), device(), &lr_on_device_);
    const double corr =
        AdamCorrection(beta1_, beta2_, OnDevice(Input(6), Device{kCPU, 0}, &iter_on_host_));
    float* p = InPlaceOutput(this, &context_, 0, "param");
    float* m1 = InPlaceOutput(this, &context_, 1, "m1");
    float* m2 = InPlaceOutput(this, &context_, 2, "m2");
    CheckOnDevice(grad, device(), "grad");
    const float* g = grad.data<float>();
    if (kRowWise) {
      LaunchRowWise<true>(sorted_, block, rows, g, lr, corr, beta1_, beta2_, 0.f, epsilon_, p, m1,
                          m2, context_.stream());
    } else {
      LaunchRuns(sorted_, block, rows,
                 AdamUpdate{block, g, lr, corr, beta1_, beta2_, epsilon_, p, m1, m2},
                 context_.stream());
    }
    return true;
  }

 private:
  float beta1_, beta2_, epsilon_;
  Tensor lr_on_device_, iter_on_host_;
  SortedRows sorted_;
};
}  // namespace

REGISTER_CUDA_OPERATOR(Adam, CudaAdamOp);
REGISTER_CUDA_OPERATOR(SparseAdam, CudaSparseAdamOp<false>);
REGISTER_CUDA_OPERATOR(RowWiseSparseAdam, CudaSparseAdamOp<true>);

}  // namespace caffe2
