// ImageInput on a CUDA device (ops spec §2.4): the batch prepared on the host is copied to the
// op's GPU. With use_gpu_transform=1 the host prepares uint8 NHWC crops (a quarter of the bytes of
// floats to copy) and NormalizeImagesToNCHW (image_transform_cuda.cu) writes the normalized NCHW
// float or float16 data on the GPU. Labels and extras are copied as they are. Everything runs on
// the calling thread's stream 0 of the GPU, synchronized before Run returns.
#include <vector>

#include "core/cuda/cuda_context.h"
#include "operators/io/image_input_op.h"
#include "operators/io/image_transform_cuda.h"

namespace caffe2 {
namespace {

class CudaImageInputOp final : public ImageInputOp {
 public:
  CudaImageInputOp(const OperatorDef& def, Workspace* ws)
      : ImageInputOp(def, ws), context_(def.device_option()) {}
  ~CudaImageInputOp() override { Finalize(); }

 protected:
  void CopyPrefetched() override {
    context_.SwitchToDevice(0);
    if (!gpu_transform()) {
      ImageInputOp::CopyPrefetched();
      return;
    }
    const Tensor& bytes = prefetched_data();  // (N, H, W, C) uint8 on the host
    const int64_t N = bytes.dim(0), H = bytes.dim(1), W = bytes.dim(2), C = bytes.dim(3);
    if (!normalization_.has_storage()) {
      std::vector<float> host(transform().mean);
      host.insert(host.end(), transform().inv_std.begin(), transform().inv_std.end());
      Tensor staged(std::vector<int64_t>{static_cast<int64_t>(host.size())}, Device{kCPU, 0});
      std::copy(host.begin(), host.end(), staged.mutable_data<float>());
      normalization_.SetDevice(context_.device());
      normalization_.CopyFrom(staged);
    }
    bytes_on_gpu_.SetDevice(context_.device());
    bytes_on_gpu_.CopyFrom(bytes);
    Tensor* out = Output(0);
    out->Resize(N, C, H, W);
    const bool half = output_type() == DataType::FLOAT16;
    void* y = half ? static_cast<void*>(out->mutable_data<float16>())
                   : static_cast<void*>(out->mutable_data<float>());
    const float* mean = normalization_.data<float>();
    NormalizeImagesToNCHW(N, H, W, C, bytes_on_gpu_.data<uint8_t>(), mean, mean + C, half, y,
                          context_.stream());
    CopyLabelsAndExtras();
    context_.FinishDeviceComputation();
  }

 private:
  CUDAContext context_;
  Tensor bytes_on_gpu_;
  Tensor normalization_;  // C means, then C inverse stds, on the GPU
};

}  // namespace

REGISTER_CUDA_OPERATOR(ImageInput, CudaImageInputOp);

}  // namespace caffe2
