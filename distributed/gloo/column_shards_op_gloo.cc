// ColumnShardsToBatch and BatchToColumnShards (engine GLOO), each the other's gradient: the
// all-to-all of model-parallel FC layers (docs/distributed.md, "Hybrid parallelism").
//
// A world of P ranks with k local buffers each holds G = P * k global shards (global index
// rank * k + i); `columns` (ints, G entries) gives shard g's number of output columns N_g, and
// N = sum N_g. The batch is G blocks of B rows, block g belonging to global shard g.
// - ColumnShardsToBatch [common_world, P_1..P_k] -> [Y_1..Y_k]: P_i (G * B, N_g) holds shard g's
//   columns for the whole batch; Y_i (B, N) holds block g's rows with every column, shard after
//   shard. It is an all-to-all: rank p sends rank q the rows of q's blocks from each P_i.
// - BatchToColumnShards [common_world, Y_1..Y_k] -> [P_1..P_k]: the inverse.
// Any dtype; the data are copied, never summed, so both directions are exact.
#include <cstring>

#include "distributed/gloo/pairwise_exchange.h"

namespace caffe2 {
namespace {

// The shapes of one exchange: shards, their columns and where they start, the block size.
struct ColumnLayout {
  int ranks = 0, rank = 0, k = 0;
  int64_t block = 0;  // B
  std::vector<int64_t> columns, first_column;
  int64_t total_columns = 0;
  size_t item = 0;

  int64_t RankColumns(int q) const {
    int64_t n = 0;
    for (int i = 0; i < k; ++i) n += columns[q * k + i];
    return n;
  }
  // Bytes of the batch rows of one rank's k blocks times `cols` columns.
  size_t Bytes(int64_t cols) const { return static_cast<size_t>(k * block * cols) * item; }
};

class ColumnExchangeOp : public ExchangeOpBase {
 public:
  using ExchangeOpBase::ExchangeOpBase;

 protected:
  ColumnLayout Layout(int64_t block, size_t item) {
    ColumnLayout l;
    l.ranks = Ranks();
    l.rank = Rank();
    l.k = InputSize() - 1;
    C2_ENFORCE(OutputSize() == l.k, "needs one output per input buffer: ", l.k, " inputs, ",
               OutputSize(), " outputs");
    l.columns = GetRepeatedArgument<int64_t>("columns");
    C2_ENFORCE(l.columns.size() == static_cast<size_t>(l.ranks) * l.k, "columns has ",
               l.columns.size(), " entries; it needs one per global shard (", l.ranks, " ranks x ",
               l.k, " buffers)");
    for (int64_t c : l.columns) {
      C2_ENFORCE(c >= 0, "columns must not be negative, got ", c);
      l.first_column.push_back(l.total_columns);
      l.total_columns += c;
    }
    l.block = block;
    l.item = item;
    return l;
  }

  // Input 1, which must be a matrix (`what` says of what, for the error).
  const Tensor& FirstMatrix(const char* what) {
    const Tensor& first = Input(1);
    C2_ENFORCE(first.ndim() == 2, "input 1 ('", debug_def().input(1), "') must be 2-D (", what,
               "), got ", first.DebugString());
    return first;
  }

  void CheckInput(int i, const std::vector<int64_t>& dims) {
    const Tensor& t = Input(i);
    C2_ENFORCE(t.device().type == kCPU, "input ", i, " ('", debug_def().input(i),
               "') is not a CPU tensor; the Gloo ops of this build take host memory");
    C2_ENFORCE(t.dims() == dims && t.dtype() == Input(1).dtype(), "input ", i, " ('",
               debug_def().input(i), "') is ", t.DebugString(), "; expected shape ",
               DimsString(dims), " and dtype ", DataTypeName(Input(1).dtype()));
  }

  static std::string DimsString(const std::vector<int64_t>& dims) {
    std::string s = "(";
    for (size_t d = 0; d < dims.size(); ++d) s += (d ? ", " : "") + std::to_string(dims[d]);
    return s + ")";
  }

  char* Out(int i, const std::vector<int64_t>& dims) {
    Tensor* out = OutputBlob(i)->GetMutableTensor(Device{});
    out->Resize(dims);
    return static_cast<char*>(out->raw_mutable_data(Input(1).meta()));
  }
};

class ColumnShardsToBatchOp final : public ColumnExchangeOp {
 public:
  using ColumnExchangeOp::ColumnExchangeOp;

 protected:
  void RunCollective() override {
    const Tensor& first = FirstMatrix("batch x its columns");
    const int64_t global = static_cast<int64_t>(Ranks()) * (InputSize() - 1);
    C2_ENFORCE(first.dim(0) % global == 0, "input 1 ('", debug_def().input(1), "') has ",
               first.dim(0), " rows, which do not split into ", global, " equal batch blocks");
    const ColumnLayout l = Layout(first.dim(0) / global, first.itemsize());
    for (int i = 0; i < l.k; ++i) {
      CheckInput(1 + i, {global * l.block, l.columns[l.rank * l.k + i]});
    }
    ExchangePlan plan(l.ranks);
    const size_t mine = l.Bytes(l.RankColumns(l.rank));
    size_t offset = 0;
    for (int q = 0; q < l.ranks; ++q) {
      plan.send_offset[q] = q * mine;
      plan.send_bytes[q] = mine;
      plan.recv_offset[q] = offset;
      plan.recv_bytes[q] = l.Bytes(l.RankColumns(q));
      offset += plan.recv_bytes[q];
    }
    PairwiseExchange& exchange = ExchangeFor(plan);
    char* packed = exchange.send_data();
    for (int q = 0; q < l.ranks; ++q) {
      for (int i = 0; i < l.k; ++i) {
        const size_t bytes = l.Bytes(l.columns[l.rank * l.k + i]);
        std::memcpy(packed, static_cast<const char*>(Input(1 + i).raw_data()) + q * bytes, bytes);
        packed += bytes;
      }
    }
    exchange.run();
    std::vector<char*> out;
    for (int j = 0; j < l.k; ++j) out.push_back(Out(j, {l.block, l.total_columns}));
    for (int q = 0; q < l.ranks; ++q) {
      const char* slab = exchange.recv_data() + plan.recv_offset[q];
      for (int s = 0; s < l.k; ++s) {
        const int g = q * l.k + s;
        const size_t row = l.columns[g] * l.item;
        for (int j = 0; j < l.k; ++j) {
          for (int64_t b = 0; b < l.block; ++b) {
            std::memcpy(out[j] + (b * l.total_columns + l.first_column[g]) * l.item,
                        slab + (j * l.block + b) * row, row);
          }
        }
        slab += l.Bytes(l.columns[g]);
      }
    }
  }
};

class BatchToColumnShardsOp final : public ColumnExchangeOp {
 public:
  using ColumnExchangeOp::ColumnExchangeOp;

 protected:
  void RunCollective() override {
    const Tensor& first = FirstMatrix("batch x all columns");
    const ColumnLayout l = Layout(first.dim(0), first.itemsize());
    for (int i = 0; i < l.k; ++i) CheckInput(1 + i, {l.block, l.total_columns});
    const int64_t global = static_cast<int64_t>(l.ranks) * l.k;
    ExchangePlan plan(l.ranks);
    const size_t mine = l.Bytes(l.RankColumns(l.rank));
    size_t offset = 0;
    for (int q = 0; q < l.ranks; ++q) {
      plan.send_offset[q] = offset;
      plan.send_bytes[q] = l.Bytes(l.RankColumns(q));
      offset += plan.send_bytes[q];
      plan.recv_offset[q] = q * mine;
      plan.recv_bytes[q] = mine;
    }
    PairwiseExchange& exchange = ExchangeFor(plan);
    char* packed = exchange.send_data();
    for (int q = 0; q < l.ranks; ++q) {
      for (int s = 0; s < l.k; ++s) {
        const int g = q * l.k + s;
        const size_t row = l.columns[g] * l.item;
        for (int j = 0; j < l.k; ++j) {
          const char* y = static_cast<const char*>(Input(1 + j).raw_data());
          for (int64_t b = 0; b < l.block; ++b) {
            std::memcpy(packed, y + (b * l.total_columns + l.first_column[g]) * l.item, row);
            packed += row;
          }
        }
      }
    }
    exchange.run();
    for (int i = 0; i < l.k; ++i) {
      const int64_t cols = l.columns[l.rank * l.k + i];
      char* out = Out(i, {global * l.block, cols});
      for (int q = 0; q < l.ranks; ++q) {
        const char* slab = exchange.recv_data() + plan.recv_offset[q];
        for (int s = 0; s < i; ++s) slab += l.Bytes(l.columns[l.rank * l.k + s]);
        std::memcpy(out + q * l.Bytes(cols), slab, l.Bytes(cols));
      }
    }
  }
};

}  // namespace

REGISTER_CPU_OPERATOR(ColumnShardsToBatch_ENGINE_GLOO, ColumnShardsToBatchOp);
REGISTER_CPU_OPERATOR(BatchToColumnShards_ENGINE_GLOO, BatchToColumnShardsOp);

}  // namespace caffe2
