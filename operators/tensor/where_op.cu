// CUDA kernel of Where (contract in where_op.h): one thread per word of Z, an element moved as
// itemsize / word words of the widest size its bytes allow. Z may be X or Y: each word is read and
// written at the same position.
#include "core/cuda/cuda_launch.h"
#include "operators/common/strided_copy.h"  // WordOf
#include "operators/tensor/tensor_util_cuda.h"
#include "operators/tensor/where_op.h"

namespace caffe2 {
namespace {

template <class W>
__global__ void WhereKernel(int64_t n, int64_t block, const bool* c, const W* x, const W* y, W* z) {
  C2_CUDA_KERNEL_LOOP(i, n) { z[i] = c[i / block] ? x[i] : y[i]; }
}

class CudaWhereOp final : public Operator<CUDAContext> {
 public:
  CudaWhereOp(const OperatorDef& def, Workspace* ws)
      : Operator<CUDAContext>(def, ws),
        on_rows_(GetSingleArgument<bool>("broadcast_on_rows", false)) {}

  bool RunOnDevice() override {
    const Tensor& C = Input(0);
    const Tensor& X = Input(1);
    const Tensor& Y = Input(2);
    const int64_t block = WhereBlock(C, X, Y, on_rows_);
    CheckOnDevice(C, device(), "C");
    CheckOnDevice(X, device(), "X");
    CheckOnDevice(Y, device(), "Y");
    Tensor* Z = Output(0);
    if (!IsInputOutputAlias(1, 0) && !IsInputOutputAlias(2, 0)) Z->Resize(X.dims());
    void* z = Z->raw_mutable_data(X.meta());
    if (X.numel() == 0) return true;
    const int64_t item = static_cast<int64_t>(X.itemsize());
    int word = 8;
    while (item % word != 0) word /= 2;
    switch (word) {
      case 1:
        return Launch<WordOf<1>::type>(C, X, Y, block * item, z);
      case 2:
        return Launch<WordOf<2>::type>(C, X, Y, block * item / 2, z);
      case 4:
        return Launch<WordOf<4>::type>(C, X, Y, block * item / 4, z);
      default:
        return Launch<WordOf<8>::type>(C, X, Y, block * item / 8, z);
    }
  }

 private:
  template <class W>
  bool Launch(const Tensor& C, const Tensor& X, const Tensor& Y, int64_t block_words, void* z) {
    const int64_t n = static_cast<int64_t>(X.nbytes() / sizeof(W));
    WhereKernel<<<CudaBlocks(n), kCudaThreadsPerBlock, 0, context_.stream()>>>(
        n, block_words, C.data<bool>(), static_cast<const W*>(X.raw_data()),
        static_cast<const W*>(Y.raw_data()), static_cast<W*>(z));
    C2_CUDA_KERNEL_LAUNCH_CHECK();
    return true;
  }

  bool on_rows_;
};

}  // namespace

REGISTER_CUDA_OPERATOR(Where, CudaWhereOp);

}  // namespace caffe2
