// CUDA Accuracy (float predictions; the contract, top_k and checks are the CPU kernel's,
// accuracy_op.cc / .h). One block per row counts the classes that outrank the label (stable
// ranking: a higher score, or an equal score and a lower index); the row is correct when fewer than
// top_k do. The count of correct rows stays on the GPU; accuracy = correct / N (0 when N is 0).
//
// Label values: labels fed on the host are checked there and raise exactly as on the CPU. On the
// GPU a label outside [0, D) cannot raise, so it poisons: the accuracy becomes NaN.
//
// Inputs living on the host or on another GPU are copied to the op's GPU.
#include <array>
#include <cmath>

#include "core/cuda/cuda_context.h"
#include "core/cuda/cuda_launch.h"
#include "core/operator.h"
#include "operators/common/block_reduce_cuda.cuh"
#include "operators/common/cuda_inputs.h"
#include "operators/loss/accuracy_op.h"

namespace caffe2 {
namespace {

using Count = unsigned long long;  // atomicAdd's 64-bit type

// counts[0] += the rows whose label is within top_k; counts[1] += the rows with a bad label.
__global__ void AccuracyRowsKernel(int64_t N, int64_t D, int top_k, const float* pred,
                                   const int* label, Count* counts) {
  for (int64_t i = blockIdx.x; i < N; i += gridDim.x) {
    const int l = label[i];
    if (l < 0 || l >= D) {  // the same for every thread of the block
      if (threadIdx.x == 0) atomicAdd(&counts[1], Count{1});
      continue;
    }
    const float* row = pred + i * D;
    const float v = row[l];
    Count better = 0;
    for (int64_t j = threadIdx.x; j < D; j += blockDim.x)
      better += row[j] > v || (row[j] == v && j < l);
    better = BlockSum(better);
    if (threadIdx.x == 0 && better < static_cast<Count>(top_k)) atomicAdd(&counts[0], Count{1});
  }
}

__global__ void AccuracyFinishKernel(int64_t N, const Count* counts, float* accuracy) {
  *accuracy = counts[1] ? NAN
              : N > 0   ? static_cast<float>(counts[0]) / static_cast<float>(N)
                        : 0.0f;
}

class CudaAccuracyOp final : public Operator<CUDAContext> {
 public:
  CudaAccuracyOp(const OperatorDef& def, Workspace* ws)
      : Operator<CUDAContext>(def, ws),
        top_k_(ReadAccuracyTopK(*this)),
        counts_(context_.device()) {}

  bool RunOnDevice() override {
    const AccuracyShape s = CheckAccuracyInputs(Input(0), Input(1), top_k_);
    const Tensor& P = OnDevice(Input(0), device(), &copies_[0]);
    const Tensor& L = OnDevice(Input(1), device(), &copies_[1]);
    counts_.Resize(2);
    Count* counts = reinterpret_cast<Count*>(counts_.mutable_data<int64_t>());
    C2_CUDA_CHECK(cudaMemsetAsync(counts, 0, counts_.nbytes(), context_.stream()));
    if (s.N > 0) {
      AccuracyRowsKernel<<<CudaRowBlocks(s.N), kCudaThreadsPerBlock, 0, context_.stream()>>>(
          s.N, s.D, top_k_, P.data<float>(), L.data<int>(), counts);
      C2_CUDA_KERNEL_LAUNCH_CHECK();
    }
    Tensor* A = Output(0);
    A->Resize(std::vector<int64_t>{});
    AccuracyFinishKernel<<<1, 1, 0, context_.stream()>>>(s.N, counts, A->mutable_data<float>());
    C2_CUDA_KERNEL_LAUNCH_CHECK();
    return true;
  }

 private:
  int top_k_;
  std::array<Tensor, 2> copies_;
  Tensor counts_;  // int64 storage of the two Counts
};

}  // namespace

REGISTER_CUDA_OPERATOR(Accuracy, CudaAccuracyOp);

}  // namespace caffe2
