// CUDA kernels of SumElements (sum_elements_cuda.cuh) and SumElementsGradient (contracts in
// sum_elements_op.cc). dSum is read on the device.
#include "operators/reduce/sum_elements_cuda.cuh"

namespace caffe2 {
namespace {

__global__ void FillFromScalar(int64_t n, const float* dsum, float scale, float* dx) {
  const float g = *dsum * scale;
  C2_CUDA_KERNEL_LOOP(i, n) { dx[i] = g; }
}

class CudaSumElementsGradientOp final : public Operator<CUDAContext> {
 public:
  using Operator<CUDAContext>::Operator;
  bool RunOnDevice() override {
    const Tensor& X = Input(0);
    const Tensor& dY = Input(1);
    CheckSumElementsGradient(dY);
    const float scale =
        GetSingleArgument<bool>("average", false) ? 1.f / static_cast<float>(X.numel()) : 1.f;
    Tensor* dX = Output(0);
    dX->Resize(X.dims());
    float* dx = dX->mutable_data<float>();
    const int64_t n = X.numel();
    if (n == 0) return true;
    FillFromScalar<<<CudaBlocks(n), kCudaThreadsPerBlock, 0, context_.stream()>>>(
        n, dY.data<float>(), scale, dx);
    C2_CUDA_KERNEL_LAUNCH_CHECK();
    return true;
  }
};

}  // namespace

REGISTER_CUDA_OPERATOR(SumElements, CudaSumElementsOp<false>);
REGISTER_CUDA_OPERATOR(SumElementsGradient, CudaSumElementsGradientOp);

}  // namespace caffe2
