#include "operators/common/strided_copy.h"

#include <cstdint>
#include <limits>
#include <utility>

#include "core/enforce.h"

namespace caffe2 {
namespace {

// The largest power of two, at most 16, dividing v (16 for v == 0).
int PowerOfTwoDividing(uint64_t v) {
  int w = 16;
  while (w > 1 && v % static_cast<uint64_t>(w) != 0) w /= 2;
  return w;
}

// Drops size-1 dims, then merges a dim into the one before it when x walks the two as one run
// (y always does: it is contiguous). Leaves at least one dim.
void Compact(std::vector<int64_t>* dims, std::vector<int64_t>* strides) {
  std::vector<int64_t> d_out, s_out;
  for (size_t d = 0; d < dims->size(); ++d) {
    const int64_t size = (*dims)[d], stride = (*strides)[d];
    if (size == 1) continue;
    if (!d_out.empty() && s_out.back() == stride * size) {
      d_out.back() *= size;
      s_out.back() = stride;
      continue;
    }
    d_out.push_back(size);
    s_out.push_back(stride);
  }
  if (d_out.empty()) {
    d_out.push_back(1);
    s_out.push_back(1);
  }
  *dims = std::move(d_out);
  *strides = std::move(s_out);
}

}  // namespace

int PointerAlignment(const void* a, const void* b) {
  return PowerOfTwoDividing(reinterpret_cast<uintptr_t>(a) | reinterpret_cast<uintptr_t>(b));
}

std::vector<int64_t> ContiguousStrides(const std::vector<int64_t>& dims) {
  std::vector<int64_t> strides(dims.size(), 1);
  for (int i = static_cast<int>(dims.size()) - 2; i >= 0; --i) {
    strides[i] = strides[i + 1] * dims[i + 1];
  }
  return strides;
}

StridedCopyPlan MakeStridedCopyPlan(const std::vector<int64_t>& ydims,
                                    const std::vector<int64_t>& xstrides, int64_t offset,
                                    size_t itemsize, int align) {
  C2_ENFORCE(ydims.size() == xstrides.size(), "strided copy: ", ydims.size(), " dims but ",
             xstrides.size(), " strides");
  StridedCopyPlan plan;
  int64_t n = 1;
  for (int64_t d : ydims) n *= d;
  if (n == 0) return plan;

  std::vector<int64_t> dims = ydims, strides = xstrides;
  Compact(&dims, &strides);

  // Words: a run that is contiguous in x may move in words wider than an element; otherwise each
  // element moves alone, as item / word words along an extra innermost dim.
  const uint64_t item = itemsize;
  const bool inner_run = strides.back() == 1;
  uint64_t divisible = static_cast<uint64_t>(align) | (static_cast<uint64_t>(offset) * item);
  if (inner_run) {
    divisible |= static_cast<uint64_t>(dims.back()) * item;
    for (size_t d = 0; d + 1 < dims.size(); ++d)
      divisible |= static_cast<uint64_t>(strides[d]) * item;
  } else {
    divisible |= item;
  }
  const int word = PowerOfTwoDividing(divisible);
  if (inner_run) {
    for (size_t d = 0; d + 1 < dims.size(); ++d) {
      strides[d] = strides[d] * static_cast<int64_t>(item) / word;
    }
    dims.back() = dims.back() * static_cast<int64_t>(item) / word;
  } else {
    const int64_t scale = static_cast<int64_t>(item) / word;  // words per element
    for (int64_t& s : strides) s *= scale;
    if (scale > 1) {
      dims.push_back(scale);
      strides.push_back(1);
    }
  }
  Compact(&dims, &strides);  // a row that became one word may merge with its neighbours
  C2_ENFORCE(static_cast<int>(dims.size()) <= kStridedCopyMaxDims, "strided copy: ", dims.size(),
             " dims remain after merging, more than the ", kStridedCopyMaxDims, " supported");

  plan.ndim = static_cast<int>(dims.size());
  plan.word = word;
  plan.offset = offset * static_cast<int64_t>(item) / word;
  plan.n = 1;
  int64_t last_source = plan.offset;
  for (int d = 0; d < plan.ndim; ++d) {
    plan.dims[d] = dims[d];
    plan.stride[d] = strides[d];
    plan.n *= dims[d];
    last_source += (dims[d] - 1) * strides[d];
  }
  constexpr int64_t kInt32Max = std::numeric_limits<int32_t>::max();
  plan.small_index = plan.n <= kInt32Max && last_source <= kInt32Max;
  return plan;
}

bool MatchTiledTranspose(const StridedCopyPlan& plan, TiledTranspose* tiled) {
  const int nd = plan.ndim;
  if (nd != 2 && nd != 3) return false;
  const int64_t rows = plan.dims[nd - 2], cols = plan.dims[nd - 1];
  if (plan.stride[nd - 2] != 1 || plan.stride[nd - 1] == 1) return false;
  if (rows < kTransposeTile / 2 || cols < kTransposeTile / 2) return false;
  tiled->batches = nd == 3 ? plan.dims[0] : 1;
  tiled->batch_stride = nd == 3 ? plan.stride[0] : 0;
  tiled->rows = rows;
  tiled->cols = cols;
  tiled->col_stride = plan.stride[nd - 1];
  tiled->offset = plan.offset;
  return true;
}

}  // namespace caffe2
