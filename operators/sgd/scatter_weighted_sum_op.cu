// CUDA kernel of ScatterWeightedSum, with the contract and input checks of the CPU op
// (scatter_weighted_sum_op.cc): X0[r] = w0 * X0[r] + sum_j w_j * slices_j[k] for r = indices[k],
// in place; repeated indices keep the CPU's order (sparse_update_cuda.cuh).
#include "operators/sgd/sparse_update_cuda.cuh"

namespace caffe2 {
namespace {

// ScatterWeightedSum: X0[r] = w0 * X0[r] + sum_j w_j * slices_j[k] for r = indices[k].

constexpr int kMaxSlices = 126;  // the schema's 255 inputs: X0, w0, indices + 126 pairs

struct ScatterUpdate {
  int64_t block;
  float* x;
  const float* w0;
  int count;
  const float* slices[kMaxSlices];
  const float* weights[kMaxSlices];
  __device__ void operator()(int64_t row, int64_t k, int64_t j) const {
    const int64_t e = row * block + j, gi = k * block + j;
    float v = *w0 * x[e];
    for (int s = 0; s < count; ++s) v += *weights[s] * slices[s][gi];
    x[e] = v;
  }
  __device__ void skip(int64_t, int64_t) const {}
};

class CudaScatterWeightedSumOp final : public Operator<CUDAContext> {
 public:
  using Operator<CUDAContext>::Operator;
  bool RunOnDevice() override {
    CheckScatterInputCount(InputSize());
    Tensor* X = Output(0);
    CheckScatterTarget(*X);
    CheckOnDevice(*X, device(), "X0");
    CheckScatterWeight(Input(1), 1);
    sorted_.Sort(Input(2), X->dim(0), device(), context_.stream());
    const int64_t block = X->size_from_dim(1);
    while (static_cast<int>(weights_on_device_.size()) < InputSize()) {
      weights_on_device_.push_back(std::make_unique<Tensor>());
    }
    ScatterUpdate update{};
    update.block = block;
    update.w0 = OnDevice(Input(1), device(), weights_on_device_[1].get()).data<float>();
    for (int i = 3; i < InputSize(); i += 2) {
      const Tensor& s = Input(i);
      CheckScatterSlices(s, i, sorted_.count(), block);
      CheckOnDevice(s, device(), "slices");
      CheckScatterWeight(Input(i + 1), i + 1);
      update.slices[update.count] = s.data<float>();
      update.weights[update.count] =
          OnDevice(Input(i + 1), device(), weights_on_device_[i + 1].get()).data<float>();
      ++update.count;
    }
    update.x = X->mutable_data<float>();
    LaunchRuns(sorted_, block, X->dim(0), update, context_.stream());
    return true;
  }

 private:
  std::vector<std::unique_ptr<Tensor>> weights_on_device_;  // by input index
  SortedRows sorted_;
};
}  // namespace

REGISTER_CUDA_OPERATOR(ScatterWeightedSum, CudaScatterWeightedSumOp);

}  // namespace caffe2
