// The fused 8-bit row-wise layout of upstream's quantized embeddings: a float row of D values is
// stored as D + 8 bytes, the D values quantized to uint8 followed by the row's scale and bias as
// two native float32s. A value reads back as q * scale + bias. Quantizing a row maps its min to 0
// and its max to 255: bias = min, scale = (max - min) / 255, q = round((x - min) * 255 /
// (max - min + 1e-8)) (round half to even, as lrintf).
// Used by the conversions (fused_8bit_rowwise_op.cc) and the sparse lengths reductions over such
// rows (operators/index/sparse_lengths_fused_8bit_rowwise_op.cc).
#pragma once

#include <cstdint>
#include <cstring>

#include "core/enforce.h"
#include "core/tensor.h"

namespace caffe2 {

constexpr int64_t kFused8BitRowExtraBytes = 2 * sizeof(float);

struct Fused8BitRowScale {
  float scale, bias;
};

inline Fused8BitRowScale ReadFused8BitRowScale(const uint8_t* row, int64_t width) {
  Fused8BitRowScale s;
  std::memcpy(&s.scale, row + width, sizeof(float));
  std::memcpy(&s.bias, row + width + sizeof(float), sizeof(float));
  return s;
}

// A fused DATA tensor: 2-d uint8 with at least the 8 trailing bytes; returns D, the values per row.
inline int64_t CheckFused8BitRowwiseData(const Tensor& data, const char* name) {
  C2_ENFORCE(data.IsType<uint8_t>() && data.ndim() == 2 && data.dim(1) >= kFused8BitRowExtraBytes,
             name,
             " must be a 2-d uint8 tensor of fused rows (D values + 8 bytes of scale and "
             "bias), got ",
             data.DebugString());
  return data.dim(1) - kFused8BitRowExtraBytes;
}

}  // namespace caffe2
