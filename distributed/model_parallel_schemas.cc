// Schemas and gradient makers of the model-parallel exchanges (beyond upstream; kernels in
// gloo/batch_shards_op_gloo.cc and gloo/column_shards_op_gloo.cc; docs/distributed.md, "Hybrid
// parallelism"). The two pairs are each other's gradients, so a model-parallel FC layer
//   AllgatherBatch -> FC on the row slice -> ColumnShardsToBatch
// differentiates into
//   BatchToColumnShards -> FCGradient -> ReduceScatterBatch.
#include <climits>

#include "core/gradient.h"
#include "core/operator.h"

namespace caffe2 {
namespace {

template <const char* kGradientType>
class ExchangeGradient final : public GradientMakerBase {
 public:
  using GradientMakerBase::GradientMakerBase;
  std::vector<OperatorDef> GetGradientDefs() override {
    // Every rank takes part in the backward exchange, so every output needs its gradient.
    std::vector<std::string> in{Def().input(0)};
    for (int i = 0; i < Def().output_size(); ++i) {
      C2_ENFORCE(!GradOut(i).IsEmpty(), Def().type(), " '", Def().name(), "': output ", i, " ('",
                 Def().output(i),
                 "') has no gradient; every output of a model-parallel exchange needs one");
      in.push_back(GO(i));
    }
    std::vector<std::string> out;
    for (int i = 1; i < Def().input_size(); ++i) out.push_back(GI(i));
    return SingleGradientDef(kGradientType, "", in, out);
  }
};

constexpr char kAllgatherBatch[] = "AllgatherBatch";
constexpr char kReduceScatterBatch[] = "ReduceScatterBatch";
constexpr char kColumnShardsToBatch[] = "ColumnShardsToBatch";
constexpr char kBatchToColumnShards[] = "BatchToColumnShards";

bool SameCountAfterWorld(int in, int out) { return in == out + 1; }

}  // namespace

OPERATOR_SCHEMA(AllgatherBatch)
    .NumInputs(2, INT_MAX)
    .NumOutputs(1)
    .SetDoc(R"DOC(
Stacks every rank's buffers along dim 0: the output holds the G = ranks x k global buffers in
rank-major, then input order. The buffers may differ in dim 0 only. The gradient is
ReduceScatterBatch. Engine GLOO, host memory; buffers may move between runs, shapes may not.
)DOC")
    .Arg("rows",
         "(repeated int, optional) dim 0 of every global buffer, when they differ; default: every "
         "buffer has the first input's")
    .Arg("status_blob", "(string) blob set to int32 [1] when the exchange fails")
    .Input(0, "comm_world", "the common world")
    .Input(1, "X", "k local buffers (any dtype, same dims after dim 0)")
    .Output(0, "Y", "the global buffers stacked along dim 0");

OPERATOR_SCHEMA(ReduceScatterBatch)
    .NumInputs(2)
    .NumOutputs(1, INT_MAX)
    .SetDoc(R"DOC(
X is the stack of G = ranks x k row blocks (the same layout on every rank). Output i receives the
sum over ranks of block rank x k + i, summed in rank order. The gradient is AllgatherBatch.
Engine GLOO, float, host memory.
)DOC")
    .Arg("rows",
         "(repeated int, optional) dim 0 of every block; default: dim 0 of X split into G equal "
         "blocks")
    .Arg("status_blob", "(string) blob set to int32 [1] when the exchange fails")
    .Input(0, "comm_world", "the common world")
    .Input(1, "X", "float, G row blocks")
    .Output(0, "Y", "k outputs, this rank's blocks summed over ranks");

OPERATOR_SCHEMA(ColumnShardsToBatch)
    .NumInputs(2, INT_MAX)
    .NumOutputs(1, INT_MAX)
    .NumInputsOutputs(SameCountAfterWorld)
    .SetDoc(R"DOC(
The forward all-to-all of a model-parallel FC layer. Input i is global shard g's output columns
(rank x k + i) for the whole gathered batch, (G x B, columns[g]); output i is block g of the batch
(B rows) with every column, the shards' columns side by side in global order, (B, sum(columns)).
The gradient is BatchToColumnShards. Engine GLOO, any dtype, host memory.
)DOC")
    .Arg("columns", "(repeated int) the output columns of every global shard, G entries")
    .Arg("status_blob", "(string) blob set to int32 [1] when the exchange fails")
    .Input(0, "comm_world", "the common world")
    .Input(1, "P", "k column shards, (G x B, columns[g])")
    .Output(0, "Y", "k batch blocks, (B, sum(columns))");

OPERATOR_SCHEMA(BatchToColumnShards)
    .NumInputs(2, INT_MAX)
    .NumOutputs(1, INT_MAX)
    .NumInputsOutputs(SameCountAfterWorld)
    .SetDoc(R"DOC(
The inverse of ColumnShardsToBatch (and its gradient): input i is block g of the batch with every
column, (B, sum(columns)); output i is global shard g's columns for the whole batch,
(G x B, columns[g]). Engine GLOO, any dtype, host memory.
)DOC")
    .Arg("columns", "(repeated int) the output columns of every global shard, G entries")
    .Arg("status_blob", "(string) blob set to int32 [1] when the exchange fails")
    .Input(0, "comm_world", "the common world")
    .Input(1, "Y", "k batch blocks, (B, sum(columns))")
    .Output(0, "P", "k column shards, (G x B, columns[g])");

REGISTER_GRADIENT(AllgatherBatch, ExchangeGradient<kReduceScatterBatch>);
REGISTER_GRADIENT(ReduceScatterBatch, ExchangeGradient<kAllgatherBatch>);
REGISTER_GRADIENT(ColumnShardsToBatch, ExchangeGradient<kBatchToColumnShards>);
REGISTER_GRADIENT(BatchToColumnShards, ExchangeGradient<kColumnShardsToBatch>);

}  // namespace caffe2
