// The device code the sparse CUDA updates share (SparseMomentumSGDUpdate in momentum_sgd_op.cu,
// ScatterWeightedSum in scatter_weighted_sum_op.cu, the (row-wise) sparse Adagrad and Adam in
// adagrad_op.cu and adam_op.cu), with the CPU ops' contracts and input checks (sgd_util.h).
// param and the moments are updated in place.
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
#pragma once

#include <cub/cub.cuh>

#include "core/cuda/cuda_launch.h"
#include "operators/common/block_reduce_cuda.cuh"
#include "operators/sgd/sgd_util_cuda.h"

namespace caffe2 {

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

}  // namespace caffe2
