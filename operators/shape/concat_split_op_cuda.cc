// CUDA Concat, DepthConcat, Split and DepthSplit (contracts in concat_split_op.h): every input of
// a Concat (output of a Split) is an (outer, extent * inner) block of the joined tensor, moved by
// one cudaMemcpy2DAsync on the op's stream. split_info is written on the host; Split's sizes input
// may live on the host or the GPU.
#include "operators/shape/concat_split_op.h"
#include "operators/tensor/tensor_util_cuda.h"

namespace caffe2 {
namespace {

// `rows` rows of `width` bytes from src (rows `spitch` bytes apart) to dst (`dpitch` apart).
void CopyRows(void* dst, size_t dpitch, const void* src, size_t spitch, size_t width, size_t rows,
              int gpu, cudaStream_t stream) {
  if (width == 0 || rows == 0) return;
  if (rows == 1 || (width == dpitch && width == spitch)) {
    C2_CUDA_CHECK(cudaMemcpyAsync(dst, src, width * rows, cudaMemcpyDeviceToDevice, stream));
    return;
  }
  int max_pitch = 0;
  C2_CUDA_CHECK(cudaDeviceGetAttribute(&max_pitch, cudaDevAttrMaxPitch, gpu));
  if (dpitch <= static_cast<size_t>(max_pitch) && spitch <= static_cast<size_t>(max_pitch)) {
    C2_CUDA_CHECK(
        cudaMemcpy2DAsync(dst, dpitch, src, spitch, width, rows, cudaMemcpyDeviceToDevice, stream));
    return;
  }
  for (size_t r = 0; r < rows; ++r) {  // rows too far apart for a 2-D copy: one copy per row
    C2_CUDA_CHECK(cudaMemcpyAsync(static_cast<char*>(dst) + r * dpitch,
                                  static_cast<const char*>(src) + r * spitch, width,
                                  cudaMemcpyDeviceToDevice, stream));
  }
}

class CudaConcatOp final : public Operator<CUDAContext> {
 public:
  CudaConcatOp(const OperatorDef& def, Workspace* ws)
      : Operator<CUDAContext>(def, ws),
        axis_(ConcatSplitAxis(*this)),
        add_axis_(GetSingleArgument<int>("add_axis", 0) != 0) {}

  bool RunOnDevice() override {
    std::vector<const Tensor*> inputs;
    for (int i = 0; i < InputSize(); ++i) inputs.push_back(&Input(i));
    const ConcatLayout layout = MakeConcatLayout(inputs, axis_, add_axis_);
    for (int i = 0; i < InputSize(); ++i) {
      CheckOnDevice(*inputs[i], device(), "input " + std::to_string(i));
    }
    WriteSplitInfo(layout, OutputBlob(1)->GetMutableTensor(Device{kCPU, 0}));
    Tensor* Y = Output(0);
    Y->Resize(layout.dims);
    const TypeMeta& meta = inputs[0]->meta();
    char* y = static_cast<char*>(Y->raw_mutable_data(meta));
    const size_t item = meta.itemsize;
    const size_t row = static_cast<size_t>(layout.dims[layout.axis] * layout.inner) * item;
    size_t offset = 0;
    for (int i = 0; i < InputSize(); ++i) {
      const size_t chunk = static_cast<size_t>(layout.sizes[i] * layout.inner) * item;
      CopyRows(y + offset, row, inputs[i]->raw_data(), chunk, chunk,
               static_cast<size_t>(layout.outer), context_.gpu_id(), context_.stream());
      offset += chunk;
    }
    return true;
  }

 private:
  int axis_;
  bool add_axis_;
};

class CudaSplitOp final : public Operator<CUDAContext> {
 public:
  CudaSplitOp(const OperatorDef& def, Workspace* ws)
      : Operator<CUDAContext>(def, ws),
        axis_(ConcatSplitAxis(*this)),
        add_axis_(GetSingleArgument<int>("add_axis", 0) != 0),
        split_(GetRepeatedArgument<int64_t>("split")) {}

  bool RunOnDevice() override {
    const Tensor& X = Input(0);
    const SplitLayout layout = MakeSplitLayout(
        X, axis_, add_axis_,
        InputSize() == 2 ? IntValues(OnHost(Input(1), &host_split_), "split") : split_,
        OutputSize());
    CheckOnDevice(X, device(), "X");
    const TypeMeta& meta = X.meta();
    const char* x = static_cast<const char*>(X.raw_data());
    const size_t item = meta.itemsize;
    const size_t row = static_cast<size_t>(layout.extent * layout.inner) * item;
    size_t offset = 0;
    for (int i = 0; i < OutputSize(); ++i) {
      Tensor* Y = Output(i);
      Y->Resize(layout.dims[i]);
      void* y = Y->raw_mutable_data(meta);
      const size_t chunk = static_cast<size_t>(layout.sizes[i] * layout.inner) * item;
      CopyRows(y, chunk, x + offset, row, chunk, static_cast<size_t>(layout.outer),
               context_.gpu_id(), context_.stream());
      offset += chunk;
    }
    return true;
  }

 private:
  int axis_;
  bool add_axis_;
  std::vector<int64_t> split_;
  Tensor host_split_;
};

}  // namespace

REGISTER_CUDA_OPERATOR(Concat, CudaConcatOp);
REGISTER_CUDA_OPERATOR(DepthConcat, CudaConcatOp);
REGISTER_CUDA_OPERATOR(Split, CudaSplitOp);
REGISTER_CUDA_OPERATOR(DepthSplit, CudaSplitOp);

}  // namespace caffe2
