// CUDA kernel of Gather (contract in gather_op.h, which says what happens to out-of-range
// indices): one thread per word of OUTPUT, rows moved in the widest words (up to 16 bytes) that
// the row size and the buffers' alignment allow.
#include "core/cuda/cuda_launch.h"
#include "operators/common/cuda_inputs.h"
#include "operators/common/strided_copy.h"  // WordOf, PointerAlignment
#include "operators/index/gather_op.h"
#include "operators/tensor/tensor_util_cuda.h"

namespace caffe2 {
namespace {

template <class W, class Index>
__global__ void GatherKernel(int64_t n, int64_t row_words, int64_t rows, const Index* indices,
                             const W* data, W* out) {
  C2_CUDA_KERNEL_LOOP(i, n) {
    const int64_t k = i / row_words;
    const int64_t r = static_cast<int64_t>(indices[k]);
    out[i] = r >= 0 && r < rows ? data[r * row_words + (i - k * row_words)] : W{};
  }
}

class CudaGatherOp final : public Operator<CUDAContext> {
 public:
  using Operator<CUDAContext>::Operator;
  bool RunOnDevice() override {
    const Tensor& data = Input(0);
    const Tensor& indices = Input(1);
    const std::vector<int64_t> dims = GatherDims(data, indices);
    C2_ENFORCE(indices.IsType<int32_t>() || indices.IsType<int64_t>(),
               "INDICES must be an int32 or int64 tensor, got ", indices.DebugString());
    CheckOnDevice(data, device(), "DATA");
    if (indices.device().type == kCPU) {
      const std::vector<int64_t> idx = IntValues(indices, "INDICES");
      for (size_t i = 0; i < idx.size(); ++i) CheckGatherIndex(idx[i], i, data);
    }
    const Tensor& idx = OnDevice(indices, device(), &device_indices_);
    Tensor* out = Output(0);
    out->Resize(dims);
    void* y = out->raw_mutable_data(data.meta());
    const int64_t row_bytes = data.size_from_dim(1) * static_cast<int64_t>(data.itemsize());
    if (out->nbytes() == 0) return true;
    int word = PointerAlignment(data.raw_data(), y);
    while (row_bytes % word != 0) word /= 2;
    switch (word) {
      case 1:
        return Launch<WordOf<1>::type>(idx, data, row_bytes, y);
      case 2:
        return Launch<WordOf<2>::type>(idx, data, row_bytes, y);
      case 4:
        return Launch<WordOf<4>::type>(idx, data, row_bytes, y);
      case 8:
        return Launch<WordOf<8>::type>(idx, data, row_bytes, y);
      default:
        return Launch<WordOf<16>::type>(idx, data, row_bytes, y);
    }
  }

 private:
  template <class W>
  bool Launch(const Tensor& idx, const Tensor& data, int64_t row_bytes, void* y) {
    const int64_t row_words = row_bytes / static_cast<int64_t>(sizeof(W));
    const int64_t n = idx.numel() * row_words;
    const W* src = static_cast<const W*>(data.raw_data());
    W* dst = static_cast<W*>(y);
    if (idx.IsType<int32_t>()) {
      GatherKernel<<<CudaBlocks(n), kCudaThreadsPerBlock, 0, context_.stream()>>>(
          n, row_words, data.dim(0), idx.data<int32_t>(), src, dst);
    } else {
      GatherKernel<<<CudaBlocks(n), kCudaThreadsPerBlock, 0, context_.stream()>>>(
          n, row_words, data.dim(0), idx.data<int64_t>(), src, dst);
    }
    C2_CUDA_KERNEL_LAUNCH_CHECK();
    return true;
  }

  Tensor device_indices_;
};

}  // namespace

REGISTER_CUDA_OPERATOR(Gather, CudaGatherOp);

}  // namespace caffe2
