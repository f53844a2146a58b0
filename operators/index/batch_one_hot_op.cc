// One-hot encodings of a batch of dense features, column j of data (N, D) against its own list of
// LENGTHS[j] entries (the lists concatenated in one 1-d tensor, as upstream):
// BatchOneHot: [data (N, D) int32/int64, lengths (D) int32/int64, values (sum(lengths)) data's
//   type] -> [output (N, sum(lengths)) data's type], output[i, off_j + k] = 1 where
//   data[i, j] == values[off_j + k], else 0.
// BatchBucketOneHot: [data (N, D) float, lengths (D), boundaries (sum(lengths)) float, sorted
// within
//   each column] -> [output (N, sum(lengths) + D) float]: column j gets lengths[j] + 1 buckets and
//   data[i, j] falls in bucket lower_bound(boundaries_j, data[i, j]).
// No gradients (as upstream).
#include <algorithm>

#include "core/gpu_fallback_declarations.h"
#include "core/gradient.h"
#include "operators/common/elementwise_cpu.h"
#include "operators/tensor/tensor_util.h"

namespace caffe2 {
namespace {

// The data's (N, D) and the start of each column's list.
struct Columns {
  int64_t N = 0, D = 0;
  std::vector<int64_t> lengths, offsets;  // offsets[D] is the total
};

Columns CheckColumns(const Tensor& data, const Tensor& lengths, const Tensor& list,
                     const char* list_name) {
  C2_ENFORCE(data.ndim() == 2, "data must be 2-d (N, D), got ", data.DebugString());
  C2_ENFORCE(lengths.ndim() == 1 && lengths.dim(0) == data.dim(1), "lengths must be 1-d with ",
             data.dim(1), " entries (one per column of data), got ", lengths.DebugString());
  Columns c;
  c.N = data.dim(0);
  c.D = data.dim(1);
  c.lengths = IntValues(lengths, "lengths");
  c.offsets.assign(c.D + 1, 0);
  for (int64_t j = 0; j < c.D; ++j) {
    C2_ENFORCE(c.lengths[j] >= 0, "lengths[", j, "] is negative: ", c.lengths[j]);
    c.offsets[j + 1] = c.offsets[j] + c.lengths[j];
  }
  C2_ENFORCE(list.ndim() == 1 && list.dim(0) == c.offsets[c.D], list_name, " must be 1-d with ",
             c.offsets[c.D], " entries (the sum of lengths), got ", list.DebugString());
  C2_ENFORCE(list.meta() == data.meta(), list_name, " must have data's type ", data.meta().name,
             ", got ", list.meta().name);
  return c;
}

using OneHotTypes = TypeList<int32_t, int64_t>;

class BatchOneHotOp final : public Operator<CPUContext> {
 public:
  using Operator<CPUContext>::Operator;
  bool RunOnDevice() override {
    const Tensor& data = Input(0);
    const Columns c = CheckColumns(data, Input(1), Input(2), "values");
    const bool ok = DispatchType(data.meta(), OneHotTypes{}, [&](auto tag) {
      using T = typename decltype(tag)::type;
      const T* x = data.template data<T>();
      const T* values = Input(2).template data<T>();
      const int64_t width = c.offsets[c.D];
      Tensor* out = Output(0);
      out->Resize(c.N, width);
      T* o = out->template mutable_data<T>();
      for (int64_t i = 0; i < c.N; ++i)
        for (int64_t j = 0; j < c.D; ++j)
          for (int64_t k = c.offsets[j]; k < c.offsets[j + 1]; ++k)
            o[i * width + k] = x[i * c.D + j] == values[k] ? T(1) : T(0);
    });
    C2_ENFORCE(ok, "unsupported type ", data.meta().name,
               " for data (supported: ", TypeNames(OneHotTypes{}), ")");
    return true;
  }
};

class BatchBucketOneHotOp final : public Operator<CPUContext> {
 public:
  using Operator<CPUContext>::Operator;
  bool RunOnDevice() override {
    const Tensor& data = Input(0);
    C2_ENFORCE(data.IsType<float>(), "data must be float, got ", data.DebugString());
    const Columns c = CheckColumns(data, Input(1), Input(2), "boundaries");
    const float* x = data.data<float>();
    const float* bounds = Input(2).data<float>();
    for (int64_t j = 0; j < c.D; ++j) {
      C2_ENFORCE(std::is_sorted(bounds + c.offsets[j], bounds + c.offsets[j + 1]),
                 "the boundaries of column ", j, " are not sorted");
    }
    const int64_t width = c.offsets[c.D] + c.D;
    Tensor* out = Output(0);
    out->Resize(c.N, width);
    float* o = out->mutable_data<float>();
    std::fill(o, o + out->numel(), 0.f);
    for (int64_t i = 0; i < c.N; ++i)
      for (int64_t j = 0; j < c.D; ++j) {
        const float* b = bounds + c.offsets[j];
        const int64_t bucket = std::lower_bound(b, b + c.lengths[j], x[i * c.D + j]) - b;
        o[i * width + c.offsets[j] + j + bucket] = 1.f;
      }
    return true;
  }
};

}  // namespace

REGISTER_CPU_OPERATOR(BatchOneHot, BatchOneHotOp);
REGISTER_GPU_FALLBACK(BatchOneHot);  // CUDA runs the CPU kernel
OPERATOR_SCHEMA(BatchOneHot)
    .NumInputs(3)
    .NumOutputs(1)
    .Input(0, "data", "(N, D) int32/int64")
    .Input(1, "lengths", "(D) int32/int64: the number of values of each column")
    .Input(2, "values", "the values of every column, concatenated, data's type")
    .Output(0, "output", "(N, sum(lengths)) of data's type: 1 where data matches the value")
    .SetDoc("One-hot encodes each column of data against that column's list of values.");
REGISTER_GRADIENT(BatchOneHot, NoGradient);

REGISTER_CPU_OPERATOR(BatchBucketOneHot, BatchBucketOneHotOp);
REGISTER_GPU_FALLBACK(BatchBucketOneHot);  // CUDA runs the CPU kernel
OPERATOR_SCHEMA(BatchBucketOneHot)
    .NumInputs(3)
    .NumOutputs(1)
    .Input(0, "data", "(N, D) float")
    .Input(1, "lengths", "(D) int32/int64: the number of boundaries of each column")
    .Input(2, "boundaries", "every column's sorted boundaries, concatenated, float")
    .Output(0, "output", "(N, sum(lengths) + D) float, one 1 per column: its bucket")
    .SetDoc("One-hot encodes the bucket each value of data falls in, per column.");
REGISTER_GRADIENT(BatchBucketOneHot, NoGradient);

}  // namespace caffe2
