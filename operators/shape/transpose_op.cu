// CUDA Transpose (contract in transpose_op.h): one strided gather (operators/common/
// strided_copy.h) on the op's stream; batched 2-D transposes go through shared-memory tiles.
#include "operators/common/strided_copy_cuda.h"
#include "operators/tensor/tensor_util_cuda.h"
#include "operators/shape/transpose_op.h"

namespace caffe2 {

void TransposeOnGpu(CUDAContext* context, const Tensor& X, const std::vector<int>& perm,
                    Tensor* Y) {
  const int nd = X.ndim();
  const std::vector<int64_t> xstrides = ContiguousStrides(X.dims());
  std::vector<int64_t> dims(nd), strides(nd);
  for (int i = 0; i < nd; ++i) {
    dims[i] = X.dim(perm[i]);
    strides[i] = xstrides[perm[i]];
  }
  Y->Resize(dims);
  void* y = Y->raw_mutable_data(X.meta());
  StridedGather(dims, strides, 0, X.itemsize(), X.raw_data(), y, context->stream());
}

namespace {

class CudaTransposeOp final : public Operator<CUDAContext> {
 public:
  CudaTransposeOp(const OperatorDef& def, Workspace* ws)
      : Operator<CUDAContext>(def, ws), axes_(GetRepeatedArgument<int>("axes")) {}

  bool RunOnDevice() override {
    const Tensor& X = Input(0);
    CheckOnDevice(X, device(), "X");
    TransposeOnGpu(&context_, X, TransposePermutation(axes_, X.ndim()), Output(0));
    return true;
  }

 private:
  std::vector<int> axes_;
};

}  // namespace

REGISTER_CUDA_OPERATOR(Transpose, CudaTransposeOp);

}  // namespace caffe2
