// CreateDB: opens a DB for reading and outputs a DBReader blob (ops spec §2.2).
// Arguments: db (string, required, used as given), db_type (string, "leveldb"), num_shards (int,
// 1), shard_id (int, 0; 0 <= shard_id < num_shards). See core/db/db_reader.h for the read order.
#include "core/db/db_reader.h"
#include "core/gradient.h"
#include "core/operator.h"

namespace caffe2 {
namespace {

class CreateDBOp final : public OperatorBase {
 public:
  CreateDBOp(const OperatorDef& def, Workspace* ws)
      : OperatorBase(def, ws),
        db_(GetSingleArgument<std::string>("db", "")),
        db_type_(GetSingleArgument<std::string>("db_type", "leveldb")),
        num_shards_(GetSingleArgument<int>("num_shards", 1)),
        shard_id_(GetSingleArgument<int>("shard_id", 0)) {
    C2_ENFORCE(!db_.empty(), "argument 'db' (the DB path to read) is required");
    C2_ENFORCE(num_shards_ >= 1, "num_shards must be >= 1, got ", num_shards_);
    C2_ENFORCE(shard_id_ >= 0 && shard_id_ < num_shards_, "shard_id ", shard_id_,
               " out of range for num_shards ", num_shards_);
  }

 protected:
  bool RunOnDevice() override {
    OutputBlob(0)->Reset(new db::DBReader(db_type_, db_, num_shards_, shard_id_));
    return true;
  }

 private:
  std::string db_, db_type_;
  int num_shards_, shard_id_;
};

}  // namespace

REGISTER_CPU_OPERATOR(CreateDB, CreateDBOp);
// The reader is a host object whatever the op's device.
REGISTER_CUDA_OPERATOR(CreateDB, CreateDBOp);

OPERATOR_SCHEMA(CreateDB)
    .NumInputs(0)
    .NumOutputs(1)
    .SetDoc(R"DOC(
Opens the DB `db` of type `db_type` for reading and outputs a DBReader. With `num_shards` n and
`shard_id` s the reader returns records s, s+n, s+2n, ... and wraps around at the end.
)DOC")
    .Arg("db", "(string) the DB path", true)
    .Arg("db_type", "(string, default \"leveldb\") the DB type")
    .Arg("num_shards", "(int, default 1) number of readers sharing the DB")
    .Arg("shard_id", "(int, default 0) this reader's shard")
    .Output(0, "reader", "the DBReader");

REGISTER_GRADIENT(CreateDB, NoGradient);

}  // namespace caffe2
