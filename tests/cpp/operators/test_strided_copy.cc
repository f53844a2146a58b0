// Strided-copy plans (operators/common/strided_copy.h), run on the host through the same
// __host__ __device__ index functions the CUDA kernels use: the one-thread-per-word walk and the
// two phases of a shared-memory transpose tile, with the launcher's choice among them
// (strided_copy.cu). Checked against the CPU kernels' results: TransposeData for permutations,
// direct loops for slices and tiles.
#include <gtest/gtest.h>

#include <cstring>
#include <numeric>
#include <random>
#include <vector>

#include "operators/common/strided_copy.h"
#include "operators/shape/transpose_op.h"

namespace caffe2 {
namespace {

// Runs the tiled kernel's blocks one after another: every thread loads, then every thread stores.
template <class W>
void EmulateTiled(const TiledTranspose& t, const W* x, W* y) {
  const int64_t grid_x = (t.cols + kTransposeTile - 1) / kTransposeTile;
  const int64_t grid_y = (t.rows + kTransposeTile - 1) / kTransposeTile;
  W tile[kTransposeTile][kTransposeTile + 1];
  for (int64_t b = 0; b < t.batches; ++b) {
    for (int64_t by = 0; by < grid_y; ++by) {
      for (int64_t bx = 0; bx < grid_x; ++bx) {
        for (int ty = 0; ty < kTransposeTileRows; ++ty) {
          for (int tx = 0; tx < kTransposeTile; ++tx)
            TransposeTileLoad(t, b, bx, by, tx, ty, x, tile);
        }
        for (int ty = 0; ty < kTransposeTileRows; ++ty) {
          for (int tx = 0; tx < kTransposeTile; ++tx)
            TransposeTileStore(t, b, bx, by, tx, ty, tile, y);
        }
      }
    }
  }
}

template <class W, class Index>
void EmulateWalk(const StridedCopyPlan& p, const W* src, W* dst, bool scatter) {
  for (int64_t i = 0; i < p.n; ++i) {
    const Index s = StridedSource<Index>(p, static_cast<Index>(i));
    if (scatter) {
      dst[s] = src[i];
    } else {
      dst[i] = src[s];
    }
  }
}

template <class W>
void EmulateWords(const StridedCopyPlan& p, const void* from, void* to, bool scatter, bool* tiled) {
  const W* src = static_cast<const W*>(from);
  W* dst = static_cast<W*>(to);
  TiledTranspose t;
  *tiled = !scatter && MatchTiledTranspose(p, &t);
  if (*tiled) return EmulateTiled(t, src, dst);
  if (p.small_index) return EmulateWalk<W, int32_t>(p, src, dst, scatter);
  EmulateWalk<W, int64_t>(p, src, dst, scatter);
}

// What StridedCopyOnStream does, on the host. Reports which path ran.
enum class Path { kNone, kMemcpy, kTiled, kWalk };
Path Emulate(const StridedCopyPlan& p, const void* src, void* dst, bool scatter) {
  if (p.n == 0) return Path::kNone;
  if (p.Contiguous()) {
    const size_t at = static_cast<size_t>(p.offset) * p.word;
    if (scatter) {
      std::memcpy(static_cast<char*>(dst) + at, src, static_cast<size_t>(p.n) * p.word);
    } else {
      std::memcpy(dst, static_cast<const char*>(src) + at, static_cast<size_t>(p.n) * p.word);
    }
    return Path::kMemcpy;
  }
  bool tiled = false;
  switch (p.word) {
    case 1:
      EmulateWords<WordOf<1>::type>(p, src, dst, scatter, &tiled);
      break;
    case 2:
      EmulateWords<WordOf<2>::type>(p, src, dst, scatter, &tiled);
      break;
    case 4:
      EmulateWords<WordOf<4>::type>(p, src, dst, scatter, &tiled);
      break;
    case 8:
      EmulateWords<WordOf<8>::type>(p, src, dst, scatter, &tiled);
      break;
    case 16:
      EmulateWords<WordOf<16>::type>(p, src, dst, scatter, &tiled);
      break;
    default:
      ADD_FAILURE() << "word " << p.word;
  }
  return tiled ? Path::kTiled : Path::kWalk;
}

// 16-byte aligned byte buffers whose data starts `shift` bytes in (to test narrower alignments).
struct Buffer {
  Buffer(size_t bytes, size_t shift) : storage(bytes + 32), shift(shift) {}
  char* data() {
    const uintptr_t base = reinterpret_cast<uintptr_t>(storage.data());
    return storage.data() + ((16 - base % 16) % 16) + shift;
  }
  std::vector<char> storage;
  size_t shift;
};

const TypeMeta& MetaOfSize(size_t item) {
  switch (item) {
    case 1:
      return TypeMeta::Make<uint8_t>();
    case 2:
      return TypeMeta::Make<uint16_t>();
    case 4:
      return TypeMeta::Make<int32_t>();
    default:
      return TypeMeta::Make<int64_t>();
  }
}

// Transposes X (random bytes) by the plan's emulation and by the CPU kernel; returns the path.
Path CheckTranspose(const std::vector<int64_t>& xdims, const std::vector<int>& perm, size_t item,
                    size_t shift, std::mt19937* rng) {
  const int nd = static_cast<int>(xdims.size());
  const int64_t n = std::accumulate(xdims.begin(), xdims.end(), int64_t{1}, std::multiplies<>());
  const size_t bytes = static_cast<size_t>(n) * item;
  Buffer x(bytes, shift), y(bytes, shift), expected(bytes, 0);
  for (size_t i = 0; i < bytes; ++i) x.data()[i] = static_cast<char>((*rng)());
  TransposeData(MetaOfSize(item), xdims, perm, x.data(), expected.data());
  const std::vector<int64_t> xstrides = ContiguousStrides(xdims);
  std::vector<int64_t> ydims(nd), strides(nd);
  for (int i = 0; i < nd; ++i) {
    ydims[i] = xdims[perm[i]];
    strides[i] = xstrides[perm[i]];
  }
  const StridedCopyPlan plan =
      MakeStridedCopyPlan(ydims, strides, 0, item, PointerAlignment(x.data(), y.data()));
  const Path path = Emulate(plan, x.data(), y.data(), false);
  EXPECT_EQ(std::memcmp(y.data(), expected.data(), bytes), 0)
      << "dims " << Tensor::DimsString(xdims) << " item " << item << " shift " << shift;
  return path;
}

TEST(StridedCopy, RandomTransposesMatchTheCpuKernel) {
  std::mt19937 rng(3);
  int paths[4] = {0, 0, 0, 0};
  for (int trial = 0; trial < 400; ++trial) {
    const int nd = static_cast<int>(rng() % 6);
    std::vector<int64_t> dims(nd);
    for (auto& d : dims) d = 1 + rng() % 5;
    std::vector<int> perm(nd);
    std::iota(perm.begin(), perm.end(), 0);
    std::shuffle(perm.begin(), perm.end(), rng);
    const size_t item = size_t{1} << (rng() % 4);
    const size_t shift = (rng() % 3 == 0) ? item * (rng() % 4) : 0;
    paths[static_cast<int>(CheckTranspose(dims, perm, item, shift, &rng))]++;
  }
  EXPECT_GT(paths[static_cast<int>(Path::kMemcpy)], 0);
  EXPECT_GT(paths[static_cast<int>(Path::kWalk)], 0);
}

TEST(StridedCopy, LayoutSwitchesAndMatrixTransposesGoThroughTiles) {
  std::mt19937 rng(5);
  // NCHW -> NHWC and back, ragged tile edges, several batches; every element size.
  for (size_t item : {1, 2, 4, 8}) {
    EXPECT_EQ(CheckTranspose({3, 37, 5, 7}, {0, 2, 3, 1}, item, 0, &rng), Path::kTiled);
    EXPECT_EQ(CheckTranspose({3, 5, 7, 37}, {0, 3, 1, 2}, item, 0, &rng), Path::kTiled);
    EXPECT_EQ(CheckTranspose({70, 33}, {1, 0}, item, 0, &rng), Path::kTiled);
    EXPECT_EQ(CheckTranspose({2, 16, 100}, {0, 2, 1}, item, item, &rng), Path::kTiled);
  }
  // Few channels: too narrow for a tile.
  EXPECT_EQ(CheckTranspose({2, 40, 40, 3}, {0, 3, 1, 2}, 4, 0, &rng), Path::kWalk);
}

TEST(StridedCopy, WholeRowsMoveInWideWords) {
  // Rows of 4 floats stay rows: 16-byte words.
  StridedCopyPlan p = MakeStridedCopyPlan({3, 2, 4}, {4, 12, 1}, 0, 4, 16);
  EXPECT_EQ(p.word, 16);
  EXPECT_EQ(p.n, 6);
  // A plain copy is one run.
  p = MakeStridedCopyPlan({5, 6}, {6, 1}, 0, 4, 16);
  EXPECT_TRUE(p.Contiguous());
  EXPECT_EQ(p.word, 8);  // 120 bytes: a multiple of 8, not of 16
  // Misaligned buffers narrow the word.
  p = MakeStridedCopyPlan({5, 8}, {8, 1}, 0, 4, 4);
  EXPECT_EQ(p.word, 4);
  // A true transpose moves single elements: 2-byte words for float16.
  p = MakeStridedCopyPlan({4, 3}, {1, 4}, 0, 2, 16);
  EXPECT_EQ(p.word, 2);
  EXPECT_EQ(p.ndim, 2);
  // Size-1 dims vanish and contiguous neighbours merge.
  p = MakeStridedCopyPlan({1, 2, 1, 3, 5}, {999, 15, 7, 5, 1}, 0, 1, 1);
  EXPECT_TRUE(p.Contiguous());
  EXPECT_TRUE(p.small_index);
  EXPECT_EQ(MakeStridedCopyPlan({3, 0, 2}, {1, 1, 1}, 0, 4, 16).n, 0);
}

TEST(StridedCopy, TooManyDimsAfterMergingIsAnError) {
  std::vector<int64_t> dims(17, 2);
  std::vector<int64_t> strides(17);
  for (int i = 0; i < 17; ++i) strides[i] = int64_t{1} << i;  // reversed: nothing merges
  EXPECT_THROW(MakeStridedCopyPlan(dims, strides, 0, 4, 16), EnforceNotMet);
  std::vector<int64_t> contiguous = ContiguousStrides(dims);
  EXPECT_TRUE(MakeStridedCopyPlan(dims, contiguous, 0, 4, 16).Contiguous());
}

TEST(StridedCopy, LargeOffsetsUseWideIndices) {
  const StridedCopyPlan p = MakeStridedCopyPlan({2, 3}, {int64_t{1} << 31, 1}, 0, 1, 1);
  EXPECT_FALSE(p.small_index);
  EXPECT_EQ(StridedSource<int64_t>(p, 4), (int64_t{1} << 31) + 1);
}

// Slice and SliceGradient: the box of X at `start` of `size`, as a gather and as a scatter.
TEST(StridedCopy, SliceBoxesGatherAndScatter) {
  std::mt19937 rng(11);
  for (int trial = 0; trial < 200; ++trial) {
    const int nd = 1 + static_cast<int>(rng() % 4);
    std::vector<int64_t> dims(nd), start(nd), size(nd);
    for (int d = 0; d < nd; ++d) {
      dims[d] = 1 + rng() % 6;
      start[d] = rng() % dims[d];
      size[d] = rng() % (dims[d] - start[d] + 1);
    }
    const size_t item = size_t{1} << (rng() % 4);
    const std::vector<int64_t> strides = ContiguousStrides(dims);
    int64_t offset = 0, n = 1, total = 1;
    for (int d = 0; d < nd; ++d) {
      offset += start[d] * strides[d];
      n *= size[d];
      total *= dims[d];
    }
    std::vector<char> x(total * item), y(n * item + 1), expected(n * item + 1);
    for (auto& c : x) c = static_cast<char>(rng());
    std::vector<int64_t> idx(nd, 0);
    for (int64_t i = 0; i < n; ++i) {  // reference: walk the box
      int64_t src = 0, r = i;
      for (int d = nd - 1; d >= 0; --d) {
        src += (start[d] + r % size[d]) * strides[d];
        r /= size[d];
      }
      std::memcpy(&expected[i * item], &x[src * item], item);
    }
    const StridedCopyPlan plan =
        MakeStridedCopyPlan(size, strides, offset, item, PointerAlignment(x.data(), y.data()));
    Emulate(plan, x.data(), y.data(), false);
    EXPECT_EQ(std::memcmp(y.data(), expected.data(), n * item), 0) << "trial " << trial;
    // Scatter the box back into zeros: the box holds y, the rest stays zero.
    std::vector<char> back(total * item, 0), back_expected(total * item, 0);
    for (int64_t i = 0; i < n; ++i) {
      int64_t dst = 0, r = i;
      for (int d = nd - 1; d >= 0; --d) {
        dst += (start[d] + r % size[d]) * strides[d];
        r /= size[d];
      }
      std::memcpy(&back_expected[dst * item], &expected[i * item], item);
    }
    Emulate(plan, expected.data(), back.data(), true);
    EXPECT_EQ(back, back_expected) << "trial " << trial;
  }
}

// Tile: X as (outer, block) repeated into (outer, tiles, block), stride 0 along the tiles.
TEST(StridedCopy, TilesRepeatBlocks) {
  for (int64_t outer : {1, 3}) {
    for (int64_t tiles : {0, 1, 4}) {
      for (int64_t block : {1, 5, 8}) {
        for (size_t item : {1, 4}) {
          std::vector<char> x(outer * block * item);
          for (size_t i = 0; i < x.size(); ++i) x[i] = static_cast<char>(i * 7 + 1);
          std::vector<char> y(outer * tiles * block * item + 1), expected(y.size());
          for (int64_t o = 0; o < outer; ++o) {
            for (int64_t t = 0; t < tiles; ++t) {
              std::memcpy(&expected[(o * tiles + t) * block * item], &x[o * block * item],
                          block * item);
            }
          }
          const StridedCopyPlan plan = MakeStridedCopyPlan(
              {outer, tiles, block}, {block, 0, 1}, 0, item, PointerAlignment(x.data(), y.data()));
          Emulate(plan, x.data(), y.data(), false);
          EXPECT_EQ(y, expected) << outer << " " << tiles << " " << block << " " << item;
        }
      }
    }
  }
}

}  // namespace
}  // namespace caffe2
