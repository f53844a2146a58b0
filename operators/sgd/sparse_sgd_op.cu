// CUDA kernels of the sparse updates, with the CPU ops' contracts and input checks (sgd_util.h):
// SparseMomentumSGDUpdate (momentum_sgd_op.cc), ScatterWeightedSum (scatter_weighted_sum_op.cc),
// SparseAdagrad / RowWiseSparseAdagrad (adagrad_op.cc), SparseAdam / RowWiseSparseAdam
// (adam_op.cc). param and the moments are updated in place.
//
// Repeated indices: the CPU applies a row once per occurrence, in the order of `indices`, each
// step reading what the one before wrote. The GPU keeps that order without atomics: a stable
// radix sort (cub::DeviceRadixSort::SortPairs, keys = rows, values = positions) groups the
// occurrences of each row, in their original order, into one run; the first entry of a run owns
// the row and applies the run's gradient rows one after the other. Elementwise updates use one
// thread per (run, column); the row-wise updates one block per run (the mean of g^2 over the grad
// row is a block reduction in double, as the CPU kernels accumulate it). Distinct rows update in
// parallel; no value depends on timing.
//
// Indices on the host are checked there (the CPU ops' errors) and copied to the GPU. Indices on
// the GPU are not checked (that would wait for the GPU every step): an index out of [0, rows)
// updates nothing (its gradient row is skipped; SparseMomentumSGDUpdate writes 0 to its grad_out
// row).
// lr (and ScatterWeightedSum's weights) are read on the device, copied there when fed on the
// host; Adam's iteration counter is read on the host (copied there when it lives on a GPU), as the
// dense CUDA Adam does.
#include <cub/cub.cuh>
#include <memory>
#include <vector>

#include "core/cuda/cuda_context.h"
#include "core/cuda/cuda_launch.h"
#include "core/operator.h"
#include "operators/common/block_reduce_cuda.cuh"
#include "operators/common/cuda_inputs.h"
#include "operators/sgd/sgd_util.h"
#include "operators/tensor/tensor_util_cuda.h"

namespace caffe2 {
namespace {

// ---------------------------------------------------------------------------------------------
// Runs of equal rows.

// keys[i] = indices[i] when it names a row, else `rows` (the key of the skipped run); pos[i] = i.
template <class Index>
__global__ void RowKeysKernel(int64_t n, const Index* indices, uint64_t rows, uint64_t* keys,
                              int32_t* pos) {
  C2_CUDA_KERNEL_LOOP(i, n) {
    const int64_t r = static_cast<int64_t>(indices[i]);
    keys[i] = r >= 0 && static_cast<uint64_t>(r) < rows ? static_cast<uint64_t>(r) : rows;
    pos[i] = static_cast<int32_t>(i);
  }
}

// The indices of a sparse update grouped into runs of equal rows on the GPU, kept across runs
// of the op so their storage is reused.
class SortedRows {
 public:
  // Checks `indices` (its type; its values too when it lives on the host: the CPU op's error),
  // then sorts them on `device`. Afterwards rows()[t] and positions()[t], t < count(), are the
  // sorted rows (`rows` for an index out of range) and their positions in `indices`.
  void Sort(const Tensor& indices, int64_t rows, Device device, cudaStream_t stream) {
    CheckSparseIndexType(indices);
    if (indices.device().type == kCPU) SparseRows(indices, rows);
    count_ = indices.numel();
    if (count_ == 0) return;
    C2_ENFORCE(count_ <= INT32_MAX, "too many indices: ", count_);
    const Tensor& idx = OnDevice(indices, device, &on_device_);
    for (Tensor* t : {&keys_in_, &keys_, &pos_in_, &pos_}) {
      t->SetDevice(device);
      t->Resize(count_);
    }
    uint64_t* keys_in = Keys(&keys_in_);
    int32_t* pos_in = pos_in_.mutable_data<int32_t>();
    const uint64_t sentinel = static_cast<uint64_t>(rows);
    if (idx.IsType<int32_t>()) {
      RowKeysKernel<<<CudaBlocks(count_), kCudaThreadsPerBlock, 0, stream>>>(
          count_, idx.data<int32_t>(), sentinel, keys_in, pos_in);
    } else {
      RowKeysKernel<<<CudaBlocks(count_), kCudaThreadsPerBlock, 0, stream>>>(
          count_, idx.data<int64_t>(), sentinel, keys_in, pos_in);
    }
    C2_CUDA_KERNEL_LAUNCH_CHECK();
    int end_bit = 1;  // keys are in [0, rows]: sort only the bits that can be set
    while (end_bit < 64 && (sentinel >> end_bit) != 0) ++end_bit;
    const int n = static_cast<int>(count_);
    size_t bytes = 0;
    C2_CUDA_CHECK(cub::DeviceRadixSort::SortPairs(nullptr, bytes, keys_in, Keys(&keys_), pos_in,
                                                  pos_.mutable_data<int32_t>(), n, 0, end_bit,
                                                  stream));
    scratch_.SetDevice(device);
    scratch_.Resize(static_cast<int64_t>(bytes > 0 ? bytes : 1));
    C2_CUDA_CHECK(cub::DeviceRadixSort::SortPairs(
        scratch_.mutable_data<uint8_t>(), bytes, keys_in, Keys(&keys_), pos_in,
        pos_.mutable_data<int32_t>(), n, 0, end_bit, stream));
  }
  int64_t count() const { return count_; }
  const uint64_t* rows() const { return reinterpret_cast<const uint64_t*>(keys_.data<int64_t>()); }
  const int32_t* positions() const { return pos_.data<int32_t>(); }

 private:
  // The keys are unsigned for the sort; the tensors hold them as int64 (same size).
  static uint64_t* Keys(Tensor* t) {
    return reinterpret_cast<uint64_t*>(t->mutable_data<int64_t>());
  }

  int64_t count_ = 0;
  Tensor on_device_, keys_in_, keys_, pos_in_, pos_, scratch_;
};

// Calls update(row, position) for every run of equal rows, the run's occurrences in order, from
// one thread per (run, column) of the rows; `column` is passed as the third argument. The run of
// out-of-range indices (key `rows`) calls skip(position, column) instead.
template <class Update>
__global__ void RunsKernel(int64_t count, int64_t block, uint64_t rows, const uint64_t* keys,
                           const int32_t* pos, Update update) {
  C2_CUDA_KERNEL_LOOP(i, count * block) {
    const int64_t t = i / block, j = i - t * block;
    const uint64_t row = keys[t];
    if (t > 0 && keys[t - 1] == row) continue;  // not the first of its run
    for (int64_t u = t; u < count && keys[u] == row; ++u) {
      if (row == rows) {
        update.skip(pos[u], j);
      } else {
        update(static_cast<int64_t>(row), pos[u], j);
      }
    }
  }
}

template <class Update>
void LaunchRuns(const SortedRows& sorted, int64_t block, int64_t rows, Update update,
                cudaStream_t stream) {
  const int64_t n = sorted.count() * block;
  if (n == 0) return;
  RunsKernel<<<CudaBlocks(n), kCudaThreadsPerBlock, 0, stream>>>(
      sorted.count(), block, static_cast<uint64_t>(rows), sorted.rows(), sorted.positions(),
      update);
  C2_CUDA_KERNEL_LAUNCH_CHECK();
}

const float* DeviceLearningRate(const Tensor& lr_input, Device device, Tensor* scratch) {
  C2_ENFORCE(lr_input.numel() == 1 && lr_input.IsType<float>(),
             "lr must be a one-element float tensor, got ", lr_input.DebugString());
  return OnDevice(lr_input, device, scratch).data<float>();
}

// Output i, the op's in-place copy of input i (a copy on the stream when they differ), as float.
float* InPlaceOutput(OperatorBase* op, CUDAContext* context, int i, const char* name) {
  const Tensor& in = op->Input(i);
  CheckFloat(in, name);
  CheckOnDevice(in, context->device(), name);
  Tensor* out = op->Output(i);
  if (!op->IsInputOutputAlias(i, i)) CopyTensorData(context, in, out);
  return out->mutable_data<float>();
}

// ---------------------------------------------------------------------------------------------
// SparseMomentumSGDUpdate: [grad, moment, lr, param, indices] -> [grad_out, moment, param].

struct MomentumUpdate {
  int64_t block;
  const float* g;
  const float* lr;
  float momentum;
  bool nesterov;
  float* gout;
  float* m;
  float* p;
  __device__ void operator()(int64_t row, int64_t k, int64_t j) const {
    const int64_t e = row * block + j, gi = k * block + j;
    const float rate = *lr, grad = g[gi], mi = m[e];
    float step;
    if (nesterov) {
      const float mnew = momentum * mi + rate * grad;
      step = (1 + momentum) * mnew - momentum * mi;
      m[e] = mnew;
    } else {
      step = rate * grad + momentum * mi;
      m[e] = step;
    }
    gout[gi] = step;
    p[e] = p[e] - step;
  }
  __device__ void skip(int64_t k, int64_t j) const { gout[k * block + j] = 0.f; }
};

class CudaSparseMomentumSGDUpdateOp final : public Operator<CUDAContext> {
 public:
  CudaSparseMomentumSGDUpdateOp(const OperatorDef& def, Workspace* ws)
      : Operator<CUDAContext>(def, ws),
        momentum_(GetSingleArgument<float>("momentum", 0.f)),
        nesterov_(GetSingleArgument<int>("nesterov", 0) != 0) {}

  bool RunOnDevice() override {
    const Tensor& grad = Input(0);
    const Tensor& moment = Input(1);
    const float* lr = DeviceLearningRate(Input(2), device(), &lr_on_device_);
    const Tensor& param = Input(3);
    CheckFloat(grad, "grad");
    CheckFloat(moment, "moment");
    CheckFloat(param, "param");
    CheckSameShape(moment, "moment", param, "param");
    CheckSparseParam(param);
    const int64_t block = param.size_from_dim(1);
    sorted_.Sort(Input(4), param.dim(0), device(), context_.stream());
    CheckSparseGrad(grad, sorted_.count(), block);
    CheckOnDevice(grad, device(), "grad");
    CheckOnDevice(moment, device(), "moment");
    CheckOnDevice(param, device(), "param");
    Tensor* ng = Output(0);
    ng->ResizeLike(grad);
    float* m = InPlaceOutput(this, &context_, 1, "moment");
    float* p = Output(2)->mutable_data<float>();  // param, in place (enforced)
    const MomentumUpdate update{block,     grad.data<float>(),        lr, momentum_,
                                nesterov_, ng->mutable_data<float>(), m,  p};
    LaunchRuns(sorted_, block, param.dim(0), update, context_.stream());
    return true;
  }

 private:
  float momentum_;
  bool nesterov_;
  Tensor lr_on_device_;
  SortedRows sorted_;
};

// ---------------------------------------------------------------------------------------------
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
    CheckFloat(*X, "X0");
    C2_ENFORCE(X->ndim() >= 1, "X0 must have at least one dimension");
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

// ---------------------------------------------------------------------------------------------
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

// The row-wise updates: one block per run of equal rows (blocks stride over the sorted entries;
// the block of an entry that does not start a run, or of the skipped run, has nothing to do).
// For each occurrence, in order: mean_sq = mean over the grad row of g^2 (summed in double), then
//   Adagrad: h[r] = decay*h[r] + mean_sq;          param += lr * g / (sqrt(h[r]) + epsilon)
//   Adam:    m2[r] = beta2*m2[r] + (1-beta2)*mean_sq;  m1 = beta1*m1 + (1-beta1)*g;
//            param += step * m1 / (sqrt(m2[r]) + epsilon)
template <bool kAdam>
__global__ void RowWiseKernel(int64_t count, int64_t block, uint64_t rows, const uint64_t* keys,
                              const int32_t* pos, const float* g, const float* lr, double corr,
                              float beta1, float beta2, float decay, float epsilon, float* p,
                              float* m1, float* moment) {
  for (int64_t t = blockIdx.x; t < count; t += gridDim.x) {
    const uint64_t row = keys[t];
    if ((t > 0 && keys[t - 1] == row) || row == rows) continue;  // uniform over the block
    const float rate = kAdam ? static_cast<float>(static_cast<double>(*lr) * corr) : *lr;
    float v = moment[row];
    for (int64_t u = t; u < count && keys[u] == row; ++u) {
      const float* gr = g + static_cast<int64_t>(pos[u]) * block;
      double sq = 0;
      for (int64_t j = threadIdx.x; j < block; j += blockDim.x) {
        sq += static_cast<double>(gr[j]) * gr[j];
      }
      sq = BlockSum(sq);
      const float mean_sq = block > 0 ? static_cast<float>(sq / block) : 0.f;
      v = kAdam ? beta2 * v + (1 - beta2) * mean_sq : decay * v + mean_sq;
      const float denom = sqrtf(v) + epsilon;
      float* pr = p + static_cast<int64_t>(row) * block;
      for (int64_t j = threadIdx.x; j < block; j += blockDim.x) {
        if (kAdam) {
          float* mr = m1 + static_cast<int64_t>(row) * block;
          const float a = beta1 * mr[j] + (1 - beta1) * gr[j];
          mr[j] = a;
          pr[j] += rate * a / denom;
        } else {
          pr[j] += rate * gr[j] / denom;
        }
      }
    }
    if (threadIdx.x == 0) moment[row] = v;
  }
}

template <bool kAdam>
void LaunchRowWise(const SortedRows& sorted, int64_t block, int64_t rows, const float* g,
                   const float* lr, double corr, float beta1, float beta2, float decay,
                   float epsilon, float* p, float* m1, float* moment, cudaStream_t stream) {
  if (sorted.count() == 0) return;
  RowWiseKernel<kAdam><<<CudaRowBlocks(sorted.count()), kCudaThreadsPerBlock, 0, stream>>>(
      sorted.count(), block, static_cast<uint64_t>(rows), sorted.rows(), sorted.positions(), g, lr,
      corr, beta1, beta2, decay, epsilon, p, m1, moment);
  C2_CUDA_KERNEL_LAUNCH_CHECK();
}

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
    CheckSparseParam(param);
    if (kRowWise) {
      CheckRowWiseMoment(Input(1), "moment", param);
    } else {
      CheckSameShape(param, "param", Input(1), "moment");
    }
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
    CheckSparseParam(param);
    if (kRowWise) {
      CheckRowWiseMoment(Input(2), "m2", param);
    } else {
      CheckSameShape(param, "param", Input(2), "m2");
    }
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

REGISTER_CUDA_OPERATOR(SparseMomentumSGDUpdate, CudaSparseMomentumSGDUpdateOp);
REGISTER_CUDA_OPERATOR(ScatterWeightedSum, CudaScatterWeightedSumOp);
REGISTER_CUDA_OPERATOR(SparseAdagrad, CudaSparseAdagradOp<false>);
REGISTER_CUDA_OPERATOR(RowWiseSparseAdagrad, CudaSparseAdagradOp<true>);
REGISTER_CUDA_OPERATOR(SparseAdam, CudaSparseAdamOp<false>);
REGISTER_CUDA_OPERATOR(RowWiseSparseAdam, CudaSparseAdamOp<true>);

}  // namespace caffe2
