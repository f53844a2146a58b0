// CUDA Tile and TileGradient (contracts in tile_op.h). Tile reads X as (outer, block) and writes Y
// as (outer, tiles, block): a strided copy whose tiles dim has stride 0. TileGradient sums each
// dX element's tiles in tile order, as the CPU kernel does.
#include "core/cuda/cuda_launch.h"
#include "operators/common/strided_copy_cuda.h"
#include "operators/tensor/tensor_util_cuda.h"
#include "operators/shape/tile_op.h"

namespace caffe2 {
namespace {

__global__ void TileGradientKernel(int64_t n, int64_t tiles, int64_t block, const float* dy,
                                   float* dx) {
  C2_CUDA_KERNEL_LOOP(i, n) {
    const int64_t o = i / block;
    const float* in = dy + o * tiles * block + (i - o * block);
    float sum = 0.f;
    for (int64_t t = 0; t < tiles; ++t) sum += in[t * block];
    dx[i] = sum;
  }
}

class CudaTileOp final : public TileBase<CUDAContext> {
 public:
  using TileBase::TileBase;
  bool RunOnDevice() override {
    const Tensor& X = Input(0);
    const auto [tiles, axis] = Params(X.ndim());
    CheckOnDevice(X, device(), "X");
    std::vector<int64_t> dims = X.dims();
    dims[axis] *= tiles;
    Tensor* Y = Output(0);
    Y->Resize(dims);
    void* y = Y->raw_mutable_data(X.meta());
    const int64_t block = X.size_from_dim(axis);
    StridedGather({X.size_to_dim(axis), tiles, block}, {block, 0, 1}, 0, X.itemsize(), X.raw_data(),
                  y, context_.stream());
    return true;
  }
};

class CudaTileGradientOp final : public TileBase<CUDAContext> {
 public:
  using TileBase::TileBase;
  bool RunOnDevice() override {
    const Tensor& dY = Input(0);
    CheckTileGradient(dY);
    const auto [tiles, axis] = Params(dY.ndim());
    CheckTileGradientTiles(dY, tiles, axis);
    CheckOnDevice(dY, device(), "dY");
    std::vector<int64_t> dims = dY.dims();
    dims[axis] /= tiles;
    Tensor* dX = Output(0);
    dX->Resize(dims);
    float* dx = dX->mutable_data<float>();
    const int64_t n = dX->numel();
    if (n == 0) return true;
    TileGradientKernel<<<CudaBlocks(n), kCudaThreadsPerBlock, 0, context_.stream()>>>(
        n, tiles, dX->size_from_dim(axis), dY.data<float>(), dx);
    C2_CUDA_KERNEL_LAUNCH_CHECK();
    return true;
  }
};

}  // namespace

REGISTER_CUDA_OPERATOR(Tile, CudaTileOp);
REGISTER_CUDA_OPERATOR(TileGradient, CudaTileGradientOp);

}  // namespace caffe2
