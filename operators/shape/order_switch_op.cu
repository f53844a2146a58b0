// CUDA NHWC2NCHW and NCHW2NHWC (contracts in order_switch_op.cc): Transpose's kernel with the
// fixed permutations.
#include "operators/tensor/tensor_util_cuda.h"
#include "operators/shape/order_switch_op.h"
#include "operators/shape/transpose_op.h"

namespace caffe2 {
namespace {

template <bool kToNCHW>
class CudaOrderSwitchOp final : public Operator<CUDAContext> {
 public:
  using Operator<CUDAContext>::Operator;
  bool RunOnDevice() override {
    const Tensor& X = Input(0);
    CheckOrderSwitchInput(X);
    CheckOnDevice(X, device(), "X");
    TransposeOnGpu(&context_, X,
                   kToNCHW ? std::vector<int>{0, 3, 1, 2} : std::vector<int>{0, 2, 3, 1},
                   Output(0));
    return true;
  }
};

}  // namespace

REGISTER_CUDA_OPERATOR(NHWC2NCHW, CudaOrderSwitchOp<true>);
REGISTER_CUDA_OPERATOR(NCHW2NHWC, CudaOrderSwitchOp<false>);

}  // namespace caffe2
