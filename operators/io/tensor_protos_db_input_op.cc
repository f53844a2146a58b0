#include "operators/io/tensor_protos_db_input_op.h"

#include <climits>
#include <cstring>

#include "core/db/db_reader.h"
#include "core/gradient.h"
#include "core/serialization.h"

namespace caffe2 {

namespace {

// Copies `n` elements of type `meta` (strings included) from src to dst.
void CopyElements(const TypeMeta& meta, const void* src, void* dst, size_t n) {
  if (meta.copy) {
    meta.copy(src, dst, n);
  } else if (n > 0) {
    std::memcpy(dst, src, n * meta.itemsize);
  }
}

}  // namespace

TensorProtosDBInputOp::TensorProtosDBInputOp(const OperatorDef& def, Workspace* ws)
    : PrefetchOperator(def, ws), batch_size_(GetSingleArgument<int>("batch_size", 0)) {
  C2_ENFORCE(batch_size_ >= 0, "batch_size must be >= 0, got ", batch_size_);
  for (int i = 0; i < OutputSize(); ++i) prefetched_.push_back(std::make_unique<Tensor>());
}

void TensorProtosDBInputOp::ReadInputs() {
  const auto& reader = InputObject<db::DBReader>(0);
  db_name_ = MakeString(reader.db_type(), " DB '", reader.source(), "'");
  const int records = batch_size_ > 0 ? batch_size_ : 1;
  keys_.resize(records);
  values_.resize(records);
  for (int r = 0; r < records; ++r) reader.Read(&keys_[r], &values_[r]);
}

void TensorProtosDBInputOp::Prefetch() {
  const int records = static_cast<int>(keys_.size());
  TensorProtos protos;
  Tensor item;
  for (int r = 0; r < records; ++r) {
    const std::string& key = keys_[r];
    const std::string& value = values_[r];
    auto where = [&] { return MakeString("record '", key, "' of ", db_name_); };
    C2_ENFORCE(protos.ParseFromString(value), where(), " is not a serialized TensorProtos (",
               value.size(), " bytes)");
    C2_ENFORCE(protos.protos_size() == OutputSize(), where(), " holds ", protos.protos_size(),
               " tensor protos but the op has ", OutputSize(), " outputs");
    for (int i = 0; i < OutputSize(); ++i) {
      const TensorProto& proto = protos.protos(i);
      Tensor* out = prefetched_[i].get();
      try {
        if (batch_size_ == 0) {
          DeserializeTensor(proto, out);
          continue;
        }
        DeserializeTensor(proto, &item);
      } catch (const std::exception& e) {
        C2_THROW(where(), ": proto ", i, " cannot be read: ", e.what());
      }
      if (r == 0) {
        std::vector<int64_t> dims{batch_size_};
        dims.insert(dims.end(), item.dims().begin(), item.dims().end());
        out->Resize(dims);
        out->raw_mutable_data(item.meta());
      } else {
        std::vector<int64_t> expected(out->dims().begin() + 1, out->dims().end());
        C2_ENFORCE(item.dims() == expected && item.meta() == out->meta(), where(), ": proto ", i,
                   " is ", DataTypeName(item.dtype()), " ", Tensor::DimsString(item.dims()),
                   " but the first record of the batch had ", DataTypeName(out->dtype()), " ",
                   Tensor::DimsString(expected));
      }
      const size_t n = static_cast<size_t>(item.numel());
      char* dst = static_cast<char*>(out->raw_mutable_data()) + r * n * item.itemsize();
      CopyElements(item.meta(), item.raw_data(), dst, n);
    }
  }
}

void TensorProtosDBInputOp::CopyPrefetched() {
  for (int i = 0; i < OutputSize(); ++i) Output(i)->CopyFrom(*prefetched_[i]);
}

REGISTER_CPU_OPERATOR(TensorProtosDBInput, TensorProtosDBInputOp);
// Records are read on the host; CopyPrefetched copies the batch to the op's GPU.
REGISTER_CUDA_OPERATOR(TensorProtosDBInput, TensorProtosDBInputOp);

OPERATOR_SCHEMA(TensorProtosDBInput)
    .NumInputs(1)
    .NumOutputs(1, INT_MAX)
    .SetDoc(R"DOC(
Reads `batch_size` records of serialized TensorProtos from the DBReader and outputs one tensor per
proto, stacked along a new first axis of length `batch_size` (with batch_size 0: one record, each proto
as it is). Every record must hold as many protos as the op has outputs. The next batch is read in the
background while the net runs.
)DOC")
    .Arg("batch_size", "(int, default 0) records per batch; 0 outputs a single record unbatched")
    .Arg("no_prefetch", "(bool, default false) read synchronously in Run")
    .Input(0, "reader", "a DBReader (from CreateDB)")
    .Output(0, "data", "one output per proto of the records");

REGISTER_GRADIENT(TensorProtosDBInput, NoGradient);

}  // namespace caffe2
