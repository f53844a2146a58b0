// CUDA Slice and SliceGradient (contracts in slice_op.h): the box is a strided view of X, copied
// out (Slice) or into zeros (SliceGradient) by one strided copy on the op's stream.
#include "operators/common/strided_copy_cuda.h"
#include "operators/shape/slice_op.h"
#include "operators/tensor/tensor_util_cuda.h"

namespace caffe2 {
namespace {

// The position in X of the box's first element, for X's strides (elements).
int64_t BoxOffset(const Box& box, const std::vector<int64_t>& strides) {
  int64_t offset = 0;
  for (size_t d = 0; d < strides.size(); ++d) offset += box.start[d] * strides[d];
  return offset;
}

class CudaSliceOp final : public SliceBase<CUDAContext> {
 public:
  CudaSliceOp(const OperatorDef& def, Workspace* ws) : SliceBase(def, ws, 1) {}
  bool RunOnDevice() override {
    const Tensor& X = Input(0);
    const Box box = GetBox(X.dims());
    CheckOnDevice(X, device(), "X");
    Tensor* Y = Output(0);
    Y->Resize(box.size);
    void* y = Y->raw_mutable_data(X.meta());
    const std::vector<int64_t> strides = ContiguousStrides(X.dims());
    StridedGather(box.size, strides, BoxOffset(box, strides), X.itemsize(), X.raw_data(), y,
                  context_.stream());
    return true;
  }
};

class CudaSliceGradientOp final : public SliceBase<CUDAContext> {
 public:
  CudaSliceGradientOp(const OperatorDef& def, Workspace* ws) : SliceBase(def, ws, 2) {}
  bool RunOnDevice() override {
    const Tensor& X = Input(0);
    const Tensor& dY = Input(InputSize() - 1);
    const Box box = GetBox(X.dims());
    CheckSliceGradient(dY, box);
    CheckOnDevice(dY, device(), "dY");
    Tensor* dX = Output(0);
    dX->Resize(X.dims());
    void* dx = dX->raw_mutable_data(dY.meta());
    if (dX->nbytes() == 0) return true;
    C2_CUDA_CHECK(cudaMemsetAsync(dx, 0, dX->nbytes(), context_.stream()));
    const std::vector<int64_t> strides = ContiguousStrides(X.dims());
    StridedScatter(box.size, strides, BoxOffset(box, strides), dY.itemsize(), dY.raw_data(), dx,
                   context_.stream());
    return true;
  }
};

}  // namespace

REGISTER_CUDA_OPERATOR(Slice, CudaSliceOp);
REGISTER_CUDA_OPERATOR(SliceGradient, CudaSliceGradientOp);

}  // namespace caffe2
