// LengthsGather: [ITEMS (any type, first dim = the total of LENGTHS), LENGTHS (int32/int64, 1-d),
// INDICES (int32/int64, 1-d)] -> [OUTPUT], the segments INDICES picks, in INDICES' order:
// OUTPUT has sum(LENGTHS[INDICES]) rows of ITEMS.dims[1:]. No gradient (as upstream).
#include <cstring>

#include "core/gpu_fallback_declarations.h"
#include "core/gradient.h"
#include "operators/tensor/tensor_util.h"

namespace caffe2 {
namespace {

class LengthsGatherOp final : public Operator<CPUContext> {
 public:
  using Operator<CPUContext>::Operator;
  bool RunOnDevice() override {
    const Tensor& items = Input(0);
    const std::vector<int64_t> lengths = IntValues(Input(1), "LENGTHS");
    const std::vector<int64_t> indices = IntValues(Input(2), "INDICES");
    C2_ENFORCE(Input(1).ndim() == 1 && Input(2).ndim() == 1,
               "LENGTHS and INDICES must be 1-d, got ", Input(1).DebugString(), " and ",
               Input(2).DebugString());
    C2_ENFORCE(items.ndim() >= 1, "ITEMS must have at least one dimension, got a 0-d tensor");
    std::vector<int64_t> offsets(lengths.size() + 1, 0);
    for (size_t i = 0; i < lengths.size(); ++i) {
      C2_ENFORCE(lengths[i] >= 0, "LENGTHS[", i, "] is negative: ", lengths[i]);
      offsets[i + 1] = offsets[i] + lengths[i];
    }
    C2_ENFORCE(offsets.back() == items.dim(0), "LENGTHS sum to ", offsets.back(), " but ITEMS has ",
               items.dim(0), " rows");
    int64_t rows = 0;
    for (size_t i = 0; i < indices.size(); ++i) {
      C2_ENFORCE(indices[i] >= 0 && indices[i] < static_cast<int64_t>(lengths.size()), "index ",
                 indices[i], " at position ", i, " out of range for ", lengths.size(), " segments");
      rows += lengths[indices[i]];
    }
    std::vector<int64_t> dims = items.dims();
    dims[0] = rows;
    Tensor* out = Output(0);
    out->Resize(dims);
    const int64_t row_items = Prod(dims, 1, dims.size());
    const size_t row_bytes = static_cast<size_t>(row_items) * items.meta().itemsize;
    const char* src = static_cast<const char*>(items.raw_data());
    char* dst = static_cast<char*>(out->raw_mutable_data(items.meta()));
    for (int64_t idx : indices) {
      const int64_t n = lengths[idx];
      CopyItems(items.meta(), n * row_items, src + offsets[idx] * row_bytes, dst);
      dst += n * row_bytes;
    }
    return true;
  }
};

}  // namespace

REGISTER_CPU_OPERATOR(LengthsGather, LengthsGatherOp);
REGISTER_GPU_FALLBACK(LengthsGather);  // CUDA runs the CPU kernel
OPERATOR_SCHEMA(LengthsGather)
    .NumInputs(3)
    .NumOutputs(1)
    .Input(0, "ITEMS", "the segments' rows, concatenated")
    .Input(1, "LENGTHS", "1-d int32/int64: rows per segment")
    .Input(2, "INDICES", "1-d int32/int64: the segments to gather")
    .Output(0, "OUTPUT", "the gathered segments' rows, concatenated")
    .SetDoc("Gathers whole segments (given by LENGTHS) of ITEMS, in the order of INDICES.");
REGISTER_GRADIENT(LengthsGather, NoGradient);

}  // namespace caffe2
