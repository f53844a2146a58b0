// CUDA kernels of ReduceSum and ReduceMean (contract in reduce_op.cc, axes in reduce_op.h): one
// block per output element walks the reduced elements (any set of axes, at most 16 dims) and
// sums them in double with a block reduction.
#include <vector>

#include "core/cuda/cuda_context.h"
#include "core/cuda/cuda_launch.h"
#include "core/operator.h"
#include "operators/common/elementwise_cpu.h"  // TypeList, DispatchType
#include "operators/reduce/reduce_op.h"

namespace caffe2 {
namespace {

constexpr int kMaxDims = 16;

// Sizes and X strides of the kept and of the reduced dims, innermost last.
struct ReduceLayout {
  int kept_ndim = 0, reduced_ndim = 0;
  int64_t kept_size[kMaxDims], kept_stride[kMaxDims];
  int64_t reduced_size[kMaxDims], reduced_stride[kMaxDims];
  int64_t reduced_count = 1;
};

ReduceLayout MakeLayout(const std::vector<int64_t>& dims, const std::vector<int>& axes) {
  const int nd = static_cast<int>(dims.size());
  C2_ENFORCE(nd <= kMaxDims, "X has ", nd, " dims; the CUDA kernel takes at most ", kMaxDims);
  ReduceLayout l;
  int64_t stride = 1;
  std::vector<int64_t> strides(nd);
  for (int i = nd - 1; i >= 0; --i) {
    strides[i] = stride;
    stride *= dims[i];
  }
  for (int i = 0; i < nd; ++i) {
    if (std::binary_search(axes.begin(), axes.end(), i)) {
      l.reduced_size[l.reduced_ndim] = dims[i];
      l.reduced_stride[l.reduced_ndim++] = strides[i];
      l.reduced_count *= dims[i];
    } else {
      l.kept_size[l.kept_ndim] = dims[i];
      l.kept_stride[l.kept_ndim++] = strides[i];
    }
  }
  return l;
}

__device__ int64_t Offset(int64_t index, int ndim, const int64_t* size, const int64_t* stride) {
  int64_t offset = 0;
  for (int d = ndim - 1; d >= 0; --d) {
    offset += (index % size[d]) * stride[d];
    index /= size[d];
  }
  return offset;
}

template <class T>
__global__ void ReduceKernel(ReduceLayout l, int64_t outputs, double scale, const T* x, T* y) {
  __shared__ double partial[kCudaThreadsPerBlock];
  for (int64_t o = blockIdx.x; o < outputs; o += gridDim.x) {
    const T* base = x + Offset(o, l.kept_ndim, l.kept_size, l.kept_stride);
    double acc = 0;
    for (int64_t k = threadIdx.x; k < l.reduced_count; k += blockDim.x) {
      acc += static_cast<double>(base[Offset(k, l.reduced_ndim, l.reduced_size, l.reduced_stride)]);
    }
    partial[threadIdx.x] = acc;
    __syncthreads();
    for (int s = blockDim.x / 2; s > 0; s >>= 1) {
      if (threadIdx.x < s) partial[threadIdx.x] += partial[threadIdx.x + s];
      __syncthreads();
    }
    if (threadIdx.x == 0) y[o] = static_cast<T>(partial[0] * scale);
    __syncthreads();
  }
}

template <bool kMean>
class CudaReduceOp final : public Operator<CUDAContext> {
 public:
  CudaReduceOp(const OperatorDef& def, Workspace* ws)
      : Operator<CUDAContext>(def, ws),
        axes_(GetRepeatedArgument<int>("axes")),
        keepdims_(GetSingleArgument<int>("keepdims", 1) != 0) {}
  bool RunOnDevice() override {
    const Tensor& X = Input(0);
    const std::vector<int> axes = ResolveAxes(axes_, X.dims());
    if (kMean) CheckMeanExtent(X, axes);
    const ReduceLayout layout = MakeLayout(X.dims(), axes);
    const bool ok = DispatchType(X.meta(), TypeList<float, double>{}, [&](auto tag) {
      using T = typename decltype(tag)::type;
      Tensor* Y = Output(0);
      Y->Resize(ReducedDims(X.dims(), axes, keepdims_));
      T* y = Y->template mutable_data<T>();
      const int64_t outputs = Y->numel();
      if (outputs == 0) return;
      const double scale =
          kMean && layout.reduced_count > 0 ? 1.0 / static_cast<double>(layout.reduced_count) : 1.0;
      const int blocks = static_cast<int>(outputs < kCudaMaxBlocks ? outputs : kCudaMaxBlocks);
      ReduceKernel<<<blocks, kCudaThreadsPerBlock, 0, context_.stream()>>>(layout, outputs, scale,
                                                                           X.template data<T>(), y);
      C2_CUDA_KERNEL_LAUNCH_CHECK();
    });
    C2_ENFORCE(ok, "unsupported type ", X.meta().name, " (supported: float, double)");
    return true;
  }

 private:
  std::vector<int> axes_;
  bool keepdims_;
};

}  // namespace

REGISTER_CUDA_OPERATOR(ReduceSum, CudaReduceOp<false>);
REGISTER_CUDA_OPERATOR(ReduceMean, CudaReduceOp<true>);

}  // namespace caffe2
