// DBExists: outputs a bool scalar (on the CPU) telling whether the DB `db_name` of `db_type` can be
// opened for reading (spec §5.12). db_name is relative to the workspace root folder unless
// absolute_path (int, 0) is set.
#include "core/db/db.h"
#include "core/gradient.h"
#include "core/operator.h"
#include "core/workspace.h"
#include "operators/io/db_path.h"

namespace caffe2 {
namespace {

class DBExistsOp final : public OperatorBase {
 public:
  DBExistsOp(const OperatorDef& def, Workspace* ws)
      : OperatorBase(def, ws),
        db_name_(GetSingleArgument<std::string>("db_name", "")),
        db_type_(GetSingleArgument<std::string>("db_type", "")),
        absolute_path_(GetSingleArgument<int>("absolute_path", 0) != 0) {
    C2_ENFORCE(!db_name_.empty(), "argument 'db_name' is required");
    C2_ENFORCE(!db_type_.empty(),
               "argument 'db_type' is required (registered: ", RegisteredDBsString(), ")");
  }

 protected:
  bool RunOnDevice() override {
    const bool exists = db::DBExists(db_type_, FullDBPath(*workspace(), db_name_, absolute_path_));
    Tensor* out = OutputBlob(0)->GetMutableTensor(Device{kCPU, 0});
    out->Resize(std::vector<int64_t>{});
    *out->mutable_data<bool>() = exists;
    return true;
  }

 private:
  std::string db_name_, db_type_;
  bool absolute_path_;
};

}  // namespace

REGISTER_CPU_OPERATOR(DBExists, DBExistsOp);

OPERATOR_SCHEMA(DBExists)
    .NumInputs(0)
    .NumOutputs(1)
    .ScalarType(TensorProto::BOOL)
    .SetDoc("Outputs true when the DB `db_name` of type `db_type` exists and can be read.")
    .Arg("absolute_path", "(int, default 0) use db_name as given instead of under the root folder")
    .Arg("db_name", "(string) the DB path", true)
    .Arg("db_type", "(string) the DB type", true)
    .Output(0, "exists", "bool scalar");

REGISTER_GRADIENT(DBExists, ShouldNotDoGradient);

}  // namespace caffe2
