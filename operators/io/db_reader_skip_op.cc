// DBReaderSkip (extension, not upstream): [reader] -> [], num_records (int64, required, >= 0).
// Advances a DBReader past `num_records` records as reading them would (each read moves num_shards
// records in the DB and wraps around), without decoding them. Resuming a training run uses it to
// put each shard's reader where the interrupted run left off.
#include "core/db/db_reader.h"
#include "core/gradient.h"
#include "core/operator.h"

namespace caffe2 {
namespace {

class DBReaderSkipOp final : public OperatorBase {
 public:
  DBReaderSkipOp(const OperatorDef& def, Workspace* ws)
      : OperatorBase(def, ws), num_records_(GetSingleArgument<int64_t>("num_records", -1)) {
    C2_ENFORCE(num_records_ >= 0, "num_records must be >= 0, got ", num_records_);
  }

 protected:
  bool RunOnDevice() override {
    const Blob& blob = InputBlob(0);
    C2_ENFORCE(blob.IsType<db::DBReader>(), "input 0 ('", debug_def().input(0),
               "') must be a DB reader (from CreateDB) but holds ", blob.TypeName());
    const db::DBReader& reader = blob.Get<db::DBReader>();
    std::string key, value;
    for (int64_t i = 0; i < num_records_; ++i) reader.Read(&key, &value);
    return true;
  }

 private:
  int64_t num_records_;
};

}  // namespace

REGISTER_CPU_OPERATOR(DBReaderSkip, DBReaderSkipOp);
REGISTER_CUDA_OPERATOR(DBReaderSkip, DBReaderSkipOp);

OPERATOR_SCHEMA(DBReaderSkip)
    .NumInputs(1)
    .NumOutputs(0)
    .SetDoc("Advances the reader past num_records records, as reading them would (extension).")
    .Arg("num_records", "(int64) how many records to skip", true)
    .Input(0, "reader", "the DB reader");

REGISTER_GRADIENT(DBReaderSkip, NoGradient);

}  // namespace caffe2
