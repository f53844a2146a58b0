// AllgatherBatch and ReduceScatterBatch (engine GLOO), each the other's gradient: the batch
// collectives of model-parallel FC layers (docs/distributed.md, "Hybrid parallelism").
//
// A world of P ranks with k local buffers each holds G = P * k global buffers, ordered rank-major
// then input order (global index rank * k + i).
// - AllgatherBatch [common_world, X_1..X_k] -> Y: every global buffer stacked along dim 0, so Y's
//   first dim is the sum of theirs and its other dims are the buffers'. Any dtype.
// - ReduceScatterBatch [common_world, X] -> [Y_1..Y_k]: X is the stack of G row blocks (on every
//   rank); Y_i is the sum over ranks of block rank * k + i. float; summed in rank order.
// `rows` (ints, one per global buffer) gives every block's first dim when they differ; without it
// every block has this rank's (AllgatherBatch) or an equal share (ReduceScatterBatch).
#include <cstring>

#include "distributed/gloo/pairwise_exchange.h"

namespace caffe2 {
namespace {

int64_t TrailingElements(const Tensor& t) {
  int64_t n = 1;
  for (int d = 1; d < t.ndim(); ++d) n *= t.dim(d);
  return n;
}

std::vector<int64_t> WithFirstDim(const Tensor& t, int64_t first) {
  std::vector<int64_t> dims = t.dims();
  dims[0] = first;
  return dims;
}

class AllgatherBatchOp final : public ExchangeOpBase {
 public:
  using ExchangeOpBase::ExchangeOpBase;

 protected:
  void RunCollective() override {
    const int k = InputSize() - 1;
    const int ranks = Ranks(), rank = Rank();
    const Tensor& first = Input(1);
    C2_ENFORCE(first.ndim() >= 1, "input 1 ('", debug_def().input(1),
               "') needs a batch dimension, got a scalar");
    std::vector<int64_t> rows = GetRepeatedArgument<int64_t>("rows");
    if (rows.empty()) rows.assign(static_cast<size_t>(ranks) * k, first.dim(0));
    C2_ENFORCE(rows.size() == static_cast<size_t>(ranks) * k, "rows has ", rows.size(),
               " entries; it needs one per global buffer (", ranks, " ranks x ", k, " inputs)");
    const size_t row_bytes = first.itemsize() * TrailingElements(first);
    for (int i = 0; i < k; ++i) {
      const Tensor& x = Input(1 + i);
      C2_ENFORCE(x.device().type == kCPU, "input ", 1 + i, " ('", debug_def().input(1 + i),
                 "') is not a CPU tensor; the Gloo ops of this build take host memory");
      C2_ENFORCE(x.dtype() == first.dtype() && x.ndim() == first.ndim() &&
                     TrailingElements(x) == TrailingElements(first),
                 "input ", 1 + i, " ('", debug_def().input(1 + i), "') is ", x.DebugString(),
                 " but input 1 is ", first.DebugString(), ": they must differ in dim 0 only");
      C2_ENFORCE(x.dim(0) == rows[rank * k + i], "input ", 1 + i, " ('", debug_def().input(1 + i),
                 "') has ", x.dim(0), " rows but rows[", rank * k + i, "] says ",
                 rows[rank * k + i]);
    }
    std::vector<size_t> chunk(ranks, 0);
    int64_t total_rows = 0;
    for (int q = 0; q < ranks; ++q) {
      for (int i = 0; i < k; ++i) chunk[q] += rows[q * k + i] * row_bytes;
    }
    for (int64_t r : rows) total_rows += r;
    ExchangePlan plan(ranks);
    size_t offset = 0;
    for (int q = 0; q < ranks; ++q) {
      plan.send_bytes[q] = chunk[rank];
      plan.recv_offset[q] = offset;
      plan.recv_bytes[q] = chunk[q];
      offset += chunk[q];
    }
    PairwiseExchange& exchange = ExchangeFor(plan);
    char* packed = exchange.send_data();
    for (int i = 0; i < k; ++i) {
      std::memcpy(packed, Input(1 + i).raw_data(), Input(1 + i).nbytes());
      packed += Input(1 + i).nbytes();
    }
    exchange.run();
    Tensor* out = OutputBlob(0)->GetMutableTensor(Device{});
    out->Resize(WithFirstDim(first, total_rows));
    void* to = out->raw_mutable_data(first.meta());
    std::memcpy(to, exchange.recv_data(), out->nbytes());
  }
};

class ReduceScatterBatchOp final : public ExchangeOpBase {
 public:
  using ExchangeOpBase::ExchangeOpBase;

 protected:
  void RunCollective() override {
    const int k = OutputSize();
    const int ranks = Ranks(), rank = Rank();
    const int64_t global = static_cast<int64_t>(ranks) * k;
    const Tensor& x = Input(1);
    C2_ENFORCE(x.IsType<float>(), "input 1 ('", debug_def().input(1), "') is ",
               DataTypeName(x.dtype()), "; ReduceScatterBatch sums float only");
    C2_ENFORCE(x.device().type == kCPU, "input 1 ('", debug_def().input(1),
               "') is not a CPU tensor; the Gloo ops of this build take host memory");
    C2_ENFORCE(x.ndim() >= 1, "input 1 ('", debug_def().input(1),
               "') needs a batch dimension, got a scalar");
    std::vector<int64_t> rows = GetRepeatedArgument<int64_t>("rows");
    if (rows.empty()) {
      C2_ENFORCE(x.dim(0) % global == 0, "input 1 ('", debug_def().input(1), "') has ", x.dim(0),
                 " rows, which do not split into ", global, " equal blocks (", ranks, " ranks x ",
                 k, " outputs); give rows");
      rows.assign(global, x.dim(0) / global);
    }
    C2_ENFORCE(rows.size() == static_cast<size_t>(global), "rows has ", rows.size(),
               " entries; it needs one per global buffer (", ranks, " ranks x ", k, " outputs)");
    int64_t total_rows = 0;
    for (int64_t r : rows) total_rows += r;
    C2_ENFORCE(total_rows == x.dim(0), "rows sum to ", total_rows, " but input 1 ('",
               debug_def().input(1), "') has ", x.dim(0));
    const int64_t row_elems = TrailingElements(x);
    const size_t row_bytes = sizeof(float) * row_elems;
    std::vector<size_t> block_rows(ranks, 0), block_start(ranks, 0);
    size_t start = 0;
    for (int q = 0; q < ranks; ++q) {
      block_start[q] = start;
      for (int i = 0; i < k; ++i) block_rows[q] += rows[q * k + i];
      start += block_rows[q];
    }
    ExchangePlan plan(ranks);
    const size_t mine = block_rows[rank] * row_bytes;
    for (int q = 0; q < ranks; ++q) {
      plan.send_offset[q] = block_start[q] * row_bytes;
      plan.send_bytes[q] = block_rows[q] * row_bytes;
      plan.recv_offset[q] = q * mine;
      plan.recv_bytes[q] = mine;
    }
    PairwiseExchange& exchange = ExchangeFor(plan);
    std::memcpy(exchange.send_data(), x.raw_data(), x.nbytes());
    exchange.run();
    const float* parts = reinterpret_cast<const float*>(exchange.recv_data());
    const int64_t n = static_cast<int64_t>(block_rows[rank]) * row_elems;
    std::vector<float> sum(parts, parts + n);
    for (int q = 1; q < ranks; ++q) {
      const float* part = parts + q * n;
      for (int64_t e = 0; e < n; ++e) sum[e] += part[e];
    }
    const float* from = sum.data();
    for (int i = 0; i < k; ++i) {
      Tensor* out = OutputBlob(i)->GetMutableTensor(Device{});
      out->Resize(WithFirstDim(x, rows[rank * k + i]));
      float* to = out->mutable_data<float>();
      std::memcpy(to, from, out->nbytes());
      from += out->numel();
    }
  }
};

}  // namespace

REGISTER_CPU_OPERATOR(AllgatherBatch_ENGINE_GLOO, AllgatherBatchOp);
REGISTER_CPU_OPERATOR(ReduceScatterBatch_ENGINE_GLOO, ReduceScatterBatchOp);

}  // namespace caffe2
