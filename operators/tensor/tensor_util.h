// Small helpers shared by the shape-manipulating tensor operators of this family.
#pragma once

#include <cstring>
#include <string>
#include <vector>

#include "core/context.h"
#include "core/enforce.h"
#include "core/operator.h"
#include "core/tensor.h"

namespace caffe2 {

// Copies n elements of type `meta` (std::string through its copy function, the rest by bytes).
inline void CopyItems(const TypeMeta& meta, int64_t n, const void* src, void* dst) {
  if (n <= 0) return;
  if (meta.copy) {
    meta.copy(src, dst, static_cast<size_t>(n));
  } else {
    std::memcpy(dst, src, static_cast<size_t>(n) * meta.itemsize);
  }
}

// Maps a possibly negative axis into [0, ndim); errors name the argument and the rank.
inline int CanonicalAxis(int axis, int ndim, const char* what = "axis") {
  C2_ENFORCE(axis >= -ndim && axis < ndim, what, " ", axis, " out of range for a ", ndim,
             "-d input");
  return axis < 0 ? axis + ndim : axis;
}

inline int64_t Prod(const std::vector<int64_t>& dims, size_t begin, size_t end) {
  int64_t p = 1;
  for (size_t i = begin; i < end && i < dims.size(); ++i) p *= dims[i];
  return p;
}

// Reads a one-element integer tensor (int32 or int64) on the CPU.
inline int64_t ScalarInt(const Tensor& t, const char* what) {
  C2_ENFORCE(t.numel() == 1 && (t.IsType<int32_t>() || t.IsType<int64_t>()), what,
             " must be a one-element int32 or int64 tensor, got ", t.DebugString());
  return t.IsType<int32_t>() ? t.data<int32_t>()[0] : t.data<int64_t>()[0];
}

// Reads a 1-D integer tensor (int32 or int64) as int64 values.
inline std::vector<int64_t> IntValues(const Tensor& t, const char* what) {
  C2_ENFORCE(t.IsType<int32_t>() || t.IsType<int64_t>(), what,
             " must be an int32 or int64 tensor, got ", t.DebugString());
  std::vector<int64_t> v(t.numel());
  for (int64_t i = 0; i < t.numel(); ++i) {
    v[i] = t.IsType<int32_t>() ? t.data<int32_t>()[i] : t.data<int64_t>()[i];
  }
  return v;
}

// t itself when it lives on the host, else its host copy in `scratch`. For the small int inputs
// (shapes, starts/ends, split sizes, tiles) that a GPU net may keep on the GPU; the copy runs on
// the stream the ops of this thread share, so it sees what earlier ops wrote.
inline const Tensor& OnHost(const Tensor& t, Tensor* scratch) {
  if (t.device().type == kCPU) return t;
  scratch->SetDevice(Device{kCPU, 0});
  scratch->CopyFrom(t);
  return *scratch;
}

// Y = a deep copy of X, for the ops written once for both devices (the CUDA overload is in
// tensor_util_cuda.h).
inline void CopyTensorData(CPUContext* /*context*/, const Tensor& X, Tensor* Y) { Y->CopyFrom(X); }

// The output of an op that only changes dims: in place, the input tensor itself, left on the
// device it lives on (its data is not touched); otherwise output `out` on the op's device.
inline Tensor* DimsOutput(OperatorBase* op, int in, int out) {
  if (op->IsInputOutputAlias(in, out)) return op->OutputBlob(out)->GetMutable<Tensor>();
  return op->Output(out);
}

}  // namespace caffe2
