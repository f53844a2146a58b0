#include <algorithm>

#include "core/cuda/cuda_launch.h"
#include "operators/common/strided_copy_cuda.h"

namespace caffe2 {
namespace {

template <class W, class Index>
__global__ void StridedGatherKernel(StridedCopyPlan plan, const W* x, W* y) {
  C2_CUDA_KERNEL_LOOP(i, plan.n) { y[i] = x[StridedSource<Index>(plan, static_cast<Index>(i))]; }
}

template <class W, class Index>
__global__ void StridedScatterKernel(StridedCopyPlan plan, const W* y, W* x) {
  C2_CUDA_KERNEL_LOOP(i, plan.n) { x[StridedSource<Index>(plan, static_cast<Index>(i))] = y[i]; }
}

template <class W>
__global__ void TiledTransposeKernel(TiledTranspose t, const W* x, W* y) {
  __shared__ W tile[kTransposeTile][kTransposeTile + 1];
  for (int64_t b = blockIdx.z; b < t.batches; b += gridDim.z) {
    TransposeTileLoad(t, b, blockIdx.x, blockIdx.y, threadIdx.x, threadIdx.y, x, tile);
    __syncthreads();
    TransposeTileStore(t, b, blockIdx.x, blockIdx.y, threadIdx.x, threadIdx.y, tile, y);
    __syncthreads();  // the tile is refilled for the next batch
  }
}

constexpr int64_t kMaxGridY = 65535, kMaxGridZ = 65535;

template <class W>
void Launch(const StridedCopyPlan& plan, const void* from, void* to, bool scatter,
            cudaStream_t stream) {
  const W* src = static_cast<const W*>(from);
  W* dst = static_cast<W*>(to);
  const int blocks = CudaBlocks(plan.n);
  TiledTranspose tiled;
  if (!scatter && MatchTiledTranspose(plan, &tiled)) {
    const int64_t grid_x = (tiled.cols + kTransposeTile - 1) / kTransposeTile;
    const int64_t grid_y = (tiled.rows + kTransposeTile - 1) / kTransposeTile;
    if (grid_y <= kMaxGridY && grid_x <= INT32_MAX) {
      const dim3 grid(static_cast<unsigned>(grid_x), static_cast<unsigned>(grid_y),
                      static_cast<unsigned>(std::min(tiled.batches, kMaxGridZ)));
      TiledTransposeKernel<W>
          <<<grid, dim3(kTransposeTile, kTransposeTileRows), 0, stream>>>(tiled, src, dst);
      C2_CUDA_KERNEL_LAUNCH_CHECK();
      return;
    }
  }
  if (scatter) {
    if (plan.small_index) {
      StridedScatterKernel<W, int32_t><<<blocks, kCudaThreadsPerBlock, 0, stream>>>(plan, src, dst);
    } else {
      StridedScatterKernel<W, int64_t><<<blocks, kCudaThreadsPerBlock, 0, stream>>>(plan, src, dst);
    }
  } else if (plan.small_index) {
    StridedGatherKernel<W, int32_t><<<blocks, kCudaThreadsPerBlock, 0, stream>>>(plan, src, dst);
  } else {
    StridedGatherKernel<W, int64_t><<<blocks, kCudaThreadsPerBlock, 0, stream>>>(plan, src, dst);
  }
  C2_CUDA_KERNEL_LAUNCH_CHECK();
}

}  // namespace

void StridedCopyOnStream(const StridedCopyPlan& plan, const void* src, void* dst, bool scatter,
                         cudaStream_t stream) {
  if (plan.n == 0) return;
  if (plan.Contiguous()) {
    const size_t bytes = static_cast<size_t>(plan.n) * plan.word;
    const size_t at = static_cast<size_t>(plan.offset) * plan.word;
    C2_CUDA_CHECK(scatter ? cudaMemcpyAsync(static_cast<char*>(dst) + at, src, bytes,
                                            cudaMemcpyDeviceToDevice, stream)
                          : cudaMemcpyAsync(dst, static_cast<const char*>(src) + at, bytes,
                                            cudaMemcpyDeviceToDevice, stream));
    return;
  }
  switch (plan.word) {
    case 1:
      return Launch<WordOf<1>::type>(plan, src, dst, scatter, stream);
    case 2:
      return Launch<WordOf<2>::type>(plan, src, dst, scatter, stream);
    case 4:
      return Launch<WordOf<4>::type>(plan, src, dst, scatter, stream);
    case 8:
      return Launch<WordOf<8>::type>(plan, src, dst, scatter, stream);
    case 16:
      return Launch<WordOf<16>::type>(plan, src, dst, scatter, stream);
    default:
      C2_THROW("strided copy: unsupported word size ", plan.word);
  }
}

void StridedGather(const std::vector<int64_t>& ydims, const std::vector<int64_t>& xstrides,
                   int64_t offset, size_t itemsize, const void* x, void* y, cudaStream_t stream) {
  const StridedCopyPlan plan =
      MakeStridedCopyPlan(ydims, xstrides, offset, itemsize, PointerAlignment(x, y));
  StridedCopyOnStream(plan, x, y, false, stream);
}

void StridedScatter(const std::vector<int64_t>& ydims, const std::vector<int64_t>& xstrides,
                    int64_t offset, size_t itemsize, const void* y, void* x, cudaStream_t stream) {
  const StridedCopyPlan plan =
      MakeStridedCopyPlan(ydims, xstrides, offset, itemsize, PointerAlignment(x, y));
  StridedCopyOnStream(plan, y, x, true, stream);
}

}  // namespace caffe2
