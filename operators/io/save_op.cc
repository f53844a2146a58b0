#include "operators/io/save_op.h"

#include <set>

#include "core/db/db.h"
#include "core/gradient.h"
#include "core/logging.h"
#include "core/serialization.h"
#include "core/workspace.h"
#include "operators/io/db_path.h"

namespace caffe2 {

SaveOp::SaveOp(const OperatorDef& def, Workspace* ws)
    : OperatorBase(def, ws),
      db_pattern_(GetSingleArgument<std::string>("db", "")),
      db_type_(GetSingleArgument<std::string>("db_type", "")),
      absolute_path_(GetSingleArgument<int>("absolute_path", 0) != 0) {
  C2_ENFORCE(!db_pattern_.empty(), "argument 'db' (the DB path to write) is required");
  C2_ENFORCE(!db_type_.empty(),
             "argument 'db_type' is required (registered: ", RegisteredDBsString(), ")");
  const auto strip_prefix = GetSingleArgument<std::string>("strip_prefix", "");
  const auto overrides = GetRepeatedArgument<std::string>("blob_name_overrides");
  names_.assign(def.input().begin(), def.input().end());
  if (!overrides.empty()) {
    C2_ENFORCE(strip_prefix.empty(), "blob_name_overrides and strip_prefix ('", strip_prefix,
               "') cannot be used together");
    C2_ENFORCE(overrides.size() == names_.size(), "blob_name_overrides has ", overrides.size(),
               " names but the op has ", names_.size(), " inputs");
    names_ = overrides;
  } else if (!strip_prefix.empty()) {
    for (std::string& name : names_) {
      auto pos = name.find(strip_prefix);
      if (pos != std::string::npos) name = name.substr(pos + strip_prefix.size());
    }
  }
  std::set<std::string> seen;
  for (size_t i = 0; i < names_.size(); ++i) {
    C2_ENFORCE(!names_[i].empty(), "input ", i, " ('", def.input(i),
               "') would be saved under an empty name");
    C2_ENFORCE(seen.insert(names_[i]).second, "two inputs would be saved under the same name '",
               names_[i], "' (input ", i, ", '", def.input(i), "')");
  }
}

bool SaveOp::RunOnDevice() {
  SaveTo(FullDBPath(*workspace(), db_pattern_, absolute_path_));
  return true;
}

void SaveOp::SaveTo(const std::string& path) {
  std::unique_ptr<db::DB> out = db::CreateDB(db_type_, path, db::NEW);
  C2_ENFORCE(out != nullptr, "unknown db_type '", db_type_, "' for DB '", path,
             "' (registered: ", RegisteredDBsString(), ")");
  std::unique_ptr<db::Transaction> txn = out->NewTransaction();
  for (int i = 0; i < InputSize(); ++i) {
    const std::string& input = debug_def().input(i);
    try {
      SerializeBlob(
          InputBlob(i), names_[i],
          [&txn](const std::string& key, const std::string& value) { txn->Put(key, value); });
      txn->Commit();
    } catch (const std::exception& e) {
      C2_THROW("cannot save input '", input, "'",
               names_[i] == input ? "" : " (as '" + names_[i] + "')", " to ", db_type_, " DB '",
               path, "': ", e.what());
    }
  }
  txn.reset();
  out->Close();
  C2_LOG(Info) << "Save: wrote " << InputSize() << " blob(s) to " << db_type_ << " DB '" << path
               << "'";
}

REGISTER_CPU_OPERATOR(Save, SaveOp);
// Device-neutral: CUDA tensors are copied to the host through CopyBytes.
REGISTER_CUDA_OPERATOR(Save, SaveOp);

OPERATOR_SCHEMA(Save)
    .NumInputs(1, OpSchema::kInf)
    .NumOutputs(0)
    .SetDoc(R"DOC(
Saves its inputs into a new DB at `db` (relative to the workspace root folder unless
`absolute_path`). Tensors are written in chunks under `<name>#%<chunk>`; other blobs under their
name. Names can be rewritten with `strip_prefix` or `blob_name_overrides`.
)DOC")
    .Arg("absolute_path", "(int, default 0) use `db` as given instead of under the root folder")
    .Arg("strip_prefix", "(string) remove everything up to this prefix from each blob name")
    .Arg("blob_name_overrides", "(strings) the names to save the inputs under, one per input")
    .Arg("db", "(string) the DB path", true)
    .Arg("db_type", "(string) the DB type: minidb, lmdb or leveldb", true)
    .Input(0, "X", "blobs to save (any number)");

REGISTER_GRADIENT(Save, ShouldNotDoGradient);

}  // namespace caffe2
