// OneHot: [indices (int64, N), index_size (one-element int64, CPU)] -> [one_hots (N, index_size)
// float], one_hots[i][indices[i]] = 1 (spec ops §1.3). NO_GRADIENT.
#include "core/gpu_fallback_declarations.h"
#include "core/gradient.h"
#include "operators/tensor/tensor_util.h"

namespace caffe2 {
namespace {

class OneHotOp final : public Operator<CPUContext> {
 public:
  using Operator<CPUContext>::Operator;
  bool RunOnDevice() override {
    const Tensor& indices = Input(0);
    C2_ENFORCE(indices.ndim() == 1 && indices.IsType<int64_t>(),
               "indices must be a 1-D int64 tensor, got ", indices.DebugString());
    const int64_t size = ScalarInt(Input(1), "index_size");
    C2_ENFORCE(size >= 0, "index_size must be non-negative, got ", size);
    const int64_t n = indices.numel();
    Tensor* out = Output(0);
    out->Resize(n, size);
    float* o = out->mutable_data<float>();
    std::fill(o, o + n * size, 0.f);
    const int64_t* idx = indices.data<int64_t>();
    for (int64_t i = 0; i < n; ++i) {
      C2_ENFORCE(idx[i] >= 0 && idx[i] < size, "index ", idx[i], " at position ", i,
                 " out of range for index_size ", size);
      o[i * size + idx[i]] = 1.f;
    }
    return true;
  }
};

class SegmentOneHotOp final : public Operator<CPUContext> {
 public:
  using Operator<CPUContext>::Operator;
  bool RunOnDevice() override {
    const Tensor& lengths = Input(0);
    const Tensor& indices = Input(1);
    C2_ENFORCE(lengths.ndim() == 1 && lengths.IsType<int64_t>(),
               "lengths must be a 1-D int64 tensor, got ", lengths.DebugString());
    C2_ENFORCE(indices.ndim() == 1 && indices.IsType<int64_t>(),
               "indices must be a 1-D int64 tensor, got ", indices.DebugString());
    const int64_t size = ScalarInt(Input(2), "index_size");
    C2_ENFORCE(size >= 0, "index_size must be non-negative, got ", size);
    const int64_t* len = lengths.data<int64_t>();
    int64_t total = 0;
    for (int64_t b = 0; b < lengths.numel(); ++b) {
      C2_ENFORCE(len[b] >= 0, "lengths[", b, "] is negative: ", len[b]);
      total += len[b];
    }
    C2_ENFORCE(total == indices.numel(), "lengths sum to ", total, " but there are ",
               indices.numel(), " indices");
    Tensor* out = Output(0);
    out->Resize(lengths.numel(), size);
    float* o = out->mutable_data<float>();
    std::fill(o, o + out->numel(), 0.f);
    const int64_t* idx = indices.data<int64_t>();
    int64_t k = 0;
    for (int64_t b = 0; b < lengths.numel(); ++b)
      for (int64_t end = k + len[b]; k < end; ++k) {
        C2_ENFORCE(idx[k] >= 0 && idx[k] < size, "index ", idx[k], " at position ", k,
                   " out of range for index_size ", size);
        o[b * size + idx[k]] = 1.f;
      }
    return true;
  }
};

}  // namespace

REGISTER_CPU_OPERATOR(OneHot, OneHotOp);
REGISTER_GPU_FALLBACK(OneHot);  // CUDA runs the CPU kernel
OPERATOR_SCHEMA(OneHot)
    .NumInputs(2)
    .NumOutputs(1)
    .TensorInference([](const OperatorDef&, const std::vector<TensorShape>& in) {
      // [N, index_size]: index_size is a runtime value, so only the type is known.
      TensorShape out;
      out.set_data_type(TensorProto::FLOAT);
      out.set_unknown_shape(true);
      return std::vector<TensorShape>{out};
    })
    .SetDoc("One-hot float rows for int64 indices.");
REGISTER_GRADIENT(OneHot, NoGradient);

REGISTER_CPU_OPERATOR(SegmentOneHot, SegmentOneHotOp);
REGISTER_GPU_FALLBACK(SegmentOneHot);  // CUDA runs the CPU kernel
OPERATOR_SCHEMA(SegmentOneHot)
    .NumInputs(3)
    .NumOutputs(1)
    .Input(0, "lengths", "1-d int64: the number of indices of each segment")
    .Input(1, "indices", "1-d int64: every segment's indices, concatenated")
    .Input(2, "index_size", "one-element int64: the width of a row")
    .Output(0, "one_hots", "(len(lengths), index_size) float")
    .SetDoc("One row per segment with a 1 at each of the segment's indices.");
REGISTER_GRADIENT(SegmentOneHot, NoGradient);

}  // namespace caffe2
