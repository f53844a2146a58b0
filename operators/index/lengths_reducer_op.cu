// CUDA kernels of the segment reductions and their gradients (contract in lengths_reducer_op.cc,
// input checks shared through lengths_reducer_op.h).
//
// Segments: LENGTHS is copied to the GPU when it is fed on the host (after the CPU op's checks of
// its values there), and its inclusive prefix sum (the segment ends, int64) is computed on the GPU
// with cub::DeviceScan, so LENGTHS held on the GPU costs no host sync.
// Forward: one thread per output value (segment, column) adds the segment's rows in order, as the
// CPU kernel does (no atomics: the result does not depend on timing).
// Gradient: one thread per dDATA value (position, column) finds its segment by a binary search of
// the ends.
//
// What the GPU cannot check without waiting for it (data held on the GPU):
// - LENGTHS on the GPU: its values are not checked. The rows the segments cover are bounded by
//   the row count the inputs give on the host (DATA's rows, the number of INDICES, the gradient's
//   trailing DATA/INDICES input or its SCALARS); positions past that bound are skipped, and
//   dDATA rows past the lengths' total are 0. A negative length gives an empty segment (forward) /
//   unspecified values (gradient), never an access out of bounds. Only LengthsMeanGradient and
//   LengthsIndicesInGradientSumGradient given just [dY, LENGTHS] copy LENGTHS to the host: nothing
//   else tells them the number of rows of dDATA.
// - INDICES on the GPU: an index out of range for DATA is skipped (adds nothing to its segment;
//   a mean still divides by the segment's length). INDICES on the host are checked there, with
//   the CPU op's error.
#include <cub/cub.cuh>

#include "core/cuda/cuda_context.h"
#include "core/cuda/cuda_launch.h"
#include "core/operator.h"
#include "operators/common/cuda_inputs.h"
#include "operators/index/lengths_reducer_op.h"
#include "operators/tensor/tensor_util_cuda.h"

namespace caffe2 {
namespace {

using Reduce = LengthsReduce;

__global__ void WidenKernel(int64_t n, const int32_t* in, int64_t* out) {
  C2_CUDA_KERNEL_LOOP(i, n) { out[i] = in[i]; }
}

// ends[s] = lengths[0] + ... + lengths[s] on the GPU, in tensors kept across runs.
class SegmentEnds {
 public:
  // `lengths` lives on `device`; returns nullptr for no segments.
  const int64_t* Compute(const Tensor& lengths, Device device, cudaStream_t stream) {
    const int64_t segments = lengths.numel();
    if (segments == 0) return nullptr;
    C2_ENFORCE(segments <= INT32_MAX, "too many segments: ", segments);
    ends_.SetDevice(device);
    ends_.Resize(segments);
    int64_t* ends = ends_.mutable_data<int64_t>();
    WidenKernel<<<CudaBlocks(segments), kCudaThreadsPerBlock, 0, stream>>>(
        segments, lengths.data<int32_t>(), ends);
    C2_CUDA_KERNEL_LAUNCH_CHECK();
    size_t bytes = 0;
    C2_CUDA_CHECK(
        cub::DeviceScan::InclusiveSum(nullptr, bytes, ends, static_cast<int>(segments), stream));
    scratch_.SetDevice(device);
    scratch_.Resize(static_cast<int64_t>(bytes > 0 ? bytes : 1));
    C2_CUDA_CHECK(cub::DeviceScan::InclusiveSum(scratch_.mutable_data<uint8_t>(), bytes, ends,
                                                static_cast<int>(segments), stream));
    return ends;
  }

 private:
  Tensor ends_, scratch_;
};

// y[s, k] = sum over positions p of segment s (p < n) of w[p] * x[row(p), k], row(p) = p or
// indices[p]; rows out of [0, rows) are skipped; divided by the segment's length for the mean.
template <Reduce kReduce, class Index>
__global__ void LengthsReduceKernel(int64_t segments, int64_t block, const int64_t* ends, int64_t n,
                                    const Index* indices, int64_t rows, const float* w,
                                    const float* x, float* y) {
  C2_CUDA_KERNEL_LOOP(i, segments * block) {
    const int64_t s = i / block, k = i - s * block;
    const int64_t begin = s > 0 ? ends[s - 1] : 0, end = ends[s];
    const int64_t last = end < n ? end : n;
    float acc = 0.f;
    for (int64_t p = begin > 0 ? begin : 0; p < last; ++p) {
      const int64_t r = indices ? static_cast<int64_t>(indices[p]) : p;
      if (r < 0 || r >= rows) continue;
      acc += (kReduce == Reduce::kWeightedSum ? w[p] : 1.f) * x[r * block + k];
    }
    if (kReduce == Reduce::kMean && end > begin) acc /= static_cast<float>(end - begin);
    y[i] = acc;
  }
}

bool IndexType(const Tensor& t) { return t.IsType<int32_t>() || t.IsType<int64_t>(); }

template <Reduce kReduce, bool kSparse>
class CudaLengthsReducerOp final : public Operator<CUDAContext> {
 public:
  using Operator<CUDAContext>::Operator;
  bool RunOnDevice() override {
    const int weighted = kReduce == Reduce::kWeightedSum ? 1 : 0;
    const Tensor& data = Input(0);
    CheckLengthsData(data);
    CheckOnDevice(data, device(), "DATA");
    const Tensor& lengths = Input(InputSize() - 1);
    CheckLengthsType(lengths);
    const bool lengths_on_host = lengths.device().type == kCPU;
    int64_t total = 0;
    if (lengths_on_host) total = LengthsTotal(LengthsValues(lengths));
    // n: the rows the segments cover, known on the host without reading GPU data.
    int64_t n = data.dim(0);
    const Tensor* idx = nullptr;
    if (kSparse) {
      const Tensor& indices = Input(1 + weighted);
      C2_ENFORCE(IndexType(indices), "INDICES must be an int32 or int64 tensor, got ",
                 indices.DebugString());
      n = indices.numel();
      if (lengths_on_host) CheckLengthsIndexCount(total, n);
      if (indices.device().type == kCPU) {
        const std::vector<int64_t> rows = IntValues(indices, "INDICES");
        for (size_t i = 0; i < rows.size(); ++i) CheckLengthsIndex(rows[i], i, data);
      }
      idx = &OnDevice(indices, device(), &indices_on_device_);
    } else if (lengths_on_host) {
      CheckLengthsDataRows(total, data);
    }
    const float* w = nullptr;
    if (weighted) {
      CheckLengthsWeights(Input(1), n, kSparse ? "WEIGHTS" : "SCALARS");
      w = OnDevice(Input(1), device(), &weights_on_device_).data<float>();
    }
    std::vector<int64_t> dims = data.dims();
    dims[0] = lengths.numel();
    Tensor* out = Output(0);
    out->Resize(dims);
    float* y = out->mutable_data<float>();
    const int64_t count = out->numel();
    if (count == 0) return true;
    const Tensor& len = OnDevice(lengths, device(), &lengths_on_device_);
    const int64_t* ends = ends_.Compute(len, device(), context_.stream());
    const int64_t block = data.size_from_dim(1);
    const float* x = data.data<float>();
    const int blocks = CudaBlocks(count);
    if (idx != nullptr && idx->IsType<int64_t>()) {
      LengthsReduceKernel<kReduce><<<blocks, kCudaThreadsPerBlock, 0, context_.stream()>>>(
          dims[0], block, ends, n, idx->data<int64_t>(), data.dim(0), w, x, y);
    } else {
      LengthsReduceKernel<kReduce><<<blocks, kCudaThreadsPerBlock, 0, context_.stream()>>>(
          dims[0], block, ends, n, idx ? idx->data<int32_t>() : nullptr, data.dim(0), w, x, y);
    }
    C2_CUDA_KERNEL_LAUNCH_CHECK();
    return true;
  }

 private:
  Tensor indices_on_device_, weights_on_device_, lengths_on_device_;
  SegmentEnds ends_;
};

// dx[p, k] = scale(p) * g[s, k] for the segment s holding position p (the first s with
// ends[s] > p; 0 when there is none), scale 1, 1/length or w[p].
template <Reduce kReduce>
__global__ void LengthsGradientKernel(int64_t n, int64_t block, int64_t segments,
                                      const int64_t* ends, const float* w, const float* g,
                                      float* dx) {
  C2_CUDA_KERNEL_LOOP(i, n * block) {
    const int64_t p = i / block, k = i - p * block;
    int64_t lo = 0, hi = segments;
    while (lo < hi) {
      const int64_t mid = lo + (hi - lo) / 2;
      if (ends[mid] > p) {
        hi = mid;
      } else {
        lo = mid + 1;
      }
    }
    float v = 0.f;
    if (lo < segments) {
      const int64_t length = ends[lo] - (lo > 0 ? ends[lo - 1] : 0);
      const float scale = kReduce == Reduce::kWeightedSum ? w[p]
                          : kReduce == Reduce::kMean      ? 1.f / static_cast<float>(length)
                                                          : 1.f;
      v = scale * g[lo * block + k];
    }
    dx[i] = v;
  }
}

template <Reduce kReduce, int kLengthsAt>
class CudaLengthsReducerGradientOp final : public Operator<CUDAContext> {
 public:
  using Operator<CUDAContext>::Operator;
  bool RunOnDevice() override {
    const Tensor& dY = Input(0);
    CheckLengthsGradOutput(dY);
    CheckOnDevice(dY, device(), "dY");
    const Tensor& lengths = Input(kLengthsAt);
    CheckLengthsType(lengths);
    CheckLengthsGradSegments(dY, lengths.numel());
    const bool has_rows_input = InputSize() > kLengthsAt + 1;
    int64_t n;
    if (lengths.device().type == kCPU) {
      n = LengthsTotal(LengthsValues(lengths));
      if (has_rows_input) CheckLengthsGradRows(Input(kLengthsAt + 1), n);
    } else if (has_rows_input) {
      n = LengthsGradRows(Input(kLengthsAt + 1));
    } else if (kReduce == Reduce::kWeightedSum) {
      n = Input(1).numel();
    } else {
      n = LengthsTotal(LengthsValues(OnHost(lengths, &lengths_on_host_)));
    }
    const float* w = nullptr;
    if (kReduce == Reduce::kWeightedSum) {
      CheckLengthsWeights(Input(1), n, "weights");
      w = OnDevice(Input(1), device(), &weights_on_device_).data<float>();
    }
    std::vector<int64_t> dims = dY.dims();
    dims[0] = n;
    Tensor* dX = Output(0);
    dX->Resize(dims);
    float* dx = dX->mutable_data<float>();
    const int64_t count = dX->numel();
    if (count == 0) return true;
    const Tensor& len = OnDevice(lengths, device(), &lengths_on_device_);
    const int64_t* ends = ends_.Compute(len, device(), context_.stream());
    LengthsGradientKernel<kReduce>
        <<<CudaBlocks(count), kCudaThreadsPerBlock, 0, context_.stream()>>>(
            n, dY.size_from_dim(1), lengths.numel(), ends, w, dY.data<float>(), dx);
    C2_CUDA_KERNEL_LAUNCH_CHECK();
    return true;
  }

 private:
  Tensor weights_on_device_, lengths_on_device_, lengths_on_host_;
  SegmentEnds ends_;
};

}  // namespace

REGISTER_CUDA_OPERATOR(LengthsSum, CudaLengthsReducerOp<Reduce::kSum, false>);
REGISTER_CUDA_OPERATOR(LengthsMean, CudaLengthsReducerOp<Reduce::kMean, false>);
REGISTER_CUDA_OPERATOR(LengthsWeightedSum, CudaLengthsReducerOp<Reduce::kWeightedSum, false>);
REGISTER_CUDA_OPERATOR(SparseLengthsSum, CudaLengthsReducerOp<Reduce::kSum, true>);
REGISTER_CUDA_OPERATOR(SparseLengthsMean, CudaLengthsReducerOp<Reduce::kMean, true>);
REGISTER_CUDA_OPERATOR(SparseLengthsWeightedSum, CudaLengthsReducerOp<Reduce::kWeightedSum, true>);
REGISTER_CUDA_OPERATOR(LengthsIndicesInGradientSumGradient,
                       CudaLengthsReducerGradientOp<Reduce::kSum, 1>);
REGISTER_CUDA_OPERATOR(LengthsMeanGradient, CudaLengthsReducerGradientOp<Reduce::kMean, 1>);
REGISTER_CUDA_OPERATOR(LengthsWeightedSumGradient,
                       CudaLengthsReducerGradientOp<Reduce::kWeightedSum, 2>);
REGISTER_CUDA_OPERATOR(SparseLengthsIndicesInGradientSumGradient,
                       CudaLengthsReducerGradientOp<Reduce::kSum, 1>);
REGISTER_CUDA_OPERATOR(SparseLengthsIndicesInGradientMeanGradient,
                       CudaLengthsReducerGradientOp<Reduce::kMean, 1>);
REGISTER_CUDA_OPERATOR(SparseLengthsIndicesInGradientWeightedSumGradient,
                       CudaLengthsReducerGradientOp<Reduce::kWeightedSum, 2>);

}  // namespace caffe2
