// Strided copies: the one data-movement pattern behind the CUDA kernels of Transpose, the layout
// switches (NHWC2NCHW, NCHW2NHWC), Slice, SliceGradient and Tile.
//
// A StridedCopyPlan describes, for a contiguous y of dims `dims` (in words of `word` bytes),
//   gather:  y[i] = x[offset + sum_d c_d(i) * stride[d]]
//   scatter: x[offset + sum_d c_d(i) * stride[d]] = y[i]       (SliceGradient)
// where c_d(i) are the coordinates of i in `dims`. MakeStridedCopyPlan builds it from element dims
// and strides: it drops size-1 dims, merges dims that are contiguous in x as well as in y, and
// picks the widest word (up to 16 bytes) that the element size, the runs and the base addresses
// allow, so a copy of whole rows moves 16-byte words while a true transpose moves single elements.
//
// The index math is __host__ __device__: the CUDA kernels (strided_copy.cu) and the host tests
// (tests/cpp/operators/test_strided_copy.cc) run the same code. A plan whose innermost two dims
// swap a contiguous run of x (a batched 2-D transpose: NCHW <-> NHWC, matrix transposes) also
// matches a TiledTranspose, which the kernels run through shared-memory tiles so that both the
// reads and the writes are coalesced.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "operators/common/host_device.h"

namespace caffe2 {

constexpr int kStridedCopyMaxDims = 16;

struct StridedCopyPlan {
  int ndim = 0;                              // dims after merging (at least 1 unless n == 0)
  int word = 1;                              // bytes per word: 1, 2, 4, 8 or 16
  int64_t n = 0;                             // words in y
  int64_t offset = 0;                        // x position of y[0], in words
  int64_t dims[kStridedCopyMaxDims] = {};    // y dims, in words
  int64_t stride[kStridedCopyMaxDims] = {};  // x stride of each y dim, in words
  bool small_index = false;                  // every y and x position fits in int32

  // y is one contiguous run of x: a plain memcpy of n words from x + offset.
  bool Contiguous() const { return ndim == 1 && stride[0] == 1; }
};

// The plan of y[i] = x[offset + sum_d c_d(i) * xstrides[d]] for a y of dims ydims, in elements of
// `itemsize` bytes; `align` is a power of two dividing both base addresses (see PointerAlignment).
// Throws when more than kStridedCopyMaxDims dims remain after merging.
StridedCopyPlan MakeStridedCopyPlan(const std::vector<int64_t>& ydims,
                                    const std::vector<int64_t>& xstrides, int64_t offset,
                                    size_t itemsize, int align);

// The largest power of two, at most 16, dividing every address given.
int PointerAlignment(const void* a, const void* b);

// Row-major strides of a contiguous tensor of `dims`, in elements.
std::vector<int64_t> ContiguousStrides(const std::vector<int64_t>& dims);

template <class Index>
C2_HOST_DEVICE inline Index StridedSource(const StridedCopyPlan& p, Index i) {
  Index src = static_cast<Index>(p.offset);
  for (int d = p.ndim - 1; d > 0; --d) {
    const Index size = static_cast<Index>(p.dims[d]);
    const Index q = i / size;
    src += (i - q * size) * static_cast<Index>(p.stride[d]);
    i = q;
  }
  return src + i * static_cast<Index>(p.stride[0]);
}

// A batched 2-D transpose: y (batches, rows, cols) contiguous, with
//   y[b, r, c] = x[offset + b * batch_stride + r + c * col_stride]   (x contiguous along r).
struct TiledTranspose {
  int64_t batches = 1, rows = 0, cols = 0, batch_stride = 0, col_stride = 0, offset = 0;
};

constexpr int kTransposeTile = 32;     // tile edge, in words
constexpr int kTransposeTileRows = 8;  // thread rows of a block (kTransposeTile threads each)

// Whether `plan` (gather direction) is a batched 2-D transpose with both sides at least half a
// tile wide (narrower ones waste most of a tile), and its tiled form.
bool MatchTiledTranspose(const StridedCopyPlan& plan, TiledTranspose* tiled);

// The two phases of one thread of a tiled-transpose block (block (bx, by) covers cols
// [bx * kTransposeTile, ...) and rows [by * kTransposeTile, ...) of batch b; thread (tx, ty)).
// Every thread of the block loads before any stores (a __syncthreads between the phases).
template <class W>
C2_HOST_DEVICE inline void TransposeTileLoad(const TiledTranspose& t, int64_t b, int64_t bx,
                                             int64_t by, int tx, int ty, const W* x,
                                             W (*tile)[kTransposeTile + 1]) {
  const int64_t r = by * kTransposeTile + tx;
  for (int j = ty; j < kTransposeTile; j += kTransposeTileRows) {
    const int64_t c = bx * kTransposeTile + j;
    if (r < t.rows && c < t.cols)
      tile[j][tx] = x[t.offset + b * t.batch_stride + r + c * t.col_stride];
  }
}

template <class W>
C2_HOST_DEVICE inline void TransposeTileStore(const TiledTranspose& t, int64_t b, int64_t bx,
                                              int64_t by, int tx, int ty,
                                              W (*tile)[kTransposeTile + 1], W* y) {
  const int64_t c = bx * kTransposeTile + tx;
  for (int j = ty; j < kTransposeTile; j += kTransposeTileRows) {
    const int64_t r = by * kTransposeTile + j;
    if (r < t.rows && c < t.cols) y[(b * t.rows + r) * t.cols + c] = tile[tx][j];
  }
}

// Words of each size the kernels move.
struct alignas(16) Word16 {
  uint64_t lo, hi;
};
template <int kBytes>
struct WordOf;
template <>
struct WordOf<1> {
  using type = uint8_t;
};
template <>
struct WordOf<2> {
  using type = uint16_t;
};
template <>
struct WordOf<4> {
  using type = uint32_t;
};
template <>
struct WordOf<8> {
  using type = uint64_t;
};
template <>
struct WordOf<16> {
  using type = Word16;
};

}  // namespace caffe2
