#include "operators/io/load_op.h"

#include "core/db/db_reader.h"
#include "core/gradient.h"
#include "core/logging.h"
#include "core/serialization.h"
#include "core/workspace.h"
#include "operators/io/db_path.h"

namespace caffe2 {

LoadOp::LoadOp(const OperatorDef& def, Workspace* ws)
    : OperatorBase(def, ws),
      db_type_(GetSingleArgument<std::string>("db_type", "")),
      add_prefix_(GetSingleArgument<std::string>("add_prefix", "")),
      strip_prefix_(GetSingleArgument<std::string>("strip_prefix", "")),
      keep_device_(GetSingleArgument<int>("keep_device", 0) != 0),
      load_all_(GetSingleArgument<int>("load_all", 0) != 0),
      allow_incomplete_(GetSingleArgument<bool>("allow_incomplete", false)) {
  if (InputSize() == 0) {
    const bool absolute = GetSingleArgument<int>("absolute_path", 0) != 0;
    std::vector<std::string> names = GetRepeatedArgument<std::string>("dbs");
    const auto db = GetSingleArgument<std::string>("db", "");
    if (!db.empty()) names.insert(names.begin(), db);
    C2_ENFORCE(!names.empty(),
               "argument 'db' or 'dbs' is required when the op has no DBReader "
               "inputs");
    C2_ENFORCE(!db_type_.empty(),
               "argument 'db_type' is required (registered: ", RegisteredDBsString(), ")");
    for (const std::string& name : names) db_paths_.push_back(FullDBPath(*ws, name, absolute));
  }
  if (load_all_) return;
  const auto sources = GetRepeatedArgument<std::string>("source_blob_names");
  if (!sources.empty()) {
    C2_ENFORCE(static_cast<int>(sources.size()) == OutputSize(), "source_blob_names has ",
               sources.size(), " names but the op has ", OutputSize(), " outputs");
  }
  for (int i = 0; i < OutputSize(); ++i) {
    const std::string& name = sources.empty() ? def.output(i) : sources[i];
    C2_ENFORCE(output_indices_.emplace(name, i).second, "the blob name '", name,
               "' is requested twice");
  }
}

std::string LoadOp::BlobNameFromKey(const std::string& db_key) const {
  std::string name = db_key.substr(0, db_key.find(kChunkIdSeparator));
  if (!strip_prefix_.empty()) {
    auto pos = name.find(strip_prefix_);
    if (pos != std::string::npos) name = name.substr(pos + strip_prefix_.size());
  }
  return add_prefix_ + name;
}

bool LoadOp::RunOnDevice() {
  states_.clear();
  db_labels_.clear();
  complete_outputs_ = 0;
  if (InputSize() > 0) {
    for (int i = 0; i < InputSize(); ++i) {
      const Blob& blob = InputBlob(i);
      C2_ENFORCE(blob.IsType<db::DBReader>(), "input ", i, " ('", debug_def().input(i),
                 "') must be a DBReader created by CreateDB; it holds ", blob.TypeName());
      const auto& reader = blob.Get<db::DBReader>();
      db_labels_.push_back(reader.db_type() + " DB '" + reader.source() + "' (reader '" +
                           debug_def().input(i) + "')");
      Extract(reader.cursor(), i, db_labels_.back());
    }
  } else {
    for (size_t i = 0; i < db_paths_.size(); ++i) {
      db_labels_.push_back(db_type_ + " DB '" + db_paths_[i] + "'");
      std::unique_ptr<db::DB> in = db::CreateDB(db_type_, db_paths_[i], db::READ);
      C2_ENFORCE(in != nullptr, "unknown db_type '", db_type_, "' for DB '", db_paths_[i],
                 "' (registered: ", RegisteredDBsString(), ")");
      in->VerifyIntegrity();  // a damaged or half-written checkpoint is an error, not a subset
      std::unique_ptr<db::Cursor> cursor = in->NewCursor();
      if (!load_all_ && complete_outputs_ == OutputSize()) {
        RefuseRepeats(cursor.get(), db_labels_.back());
      } else {
        Extract(cursor.get(), static_cast<int>(i), db_labels_.back());
      }
    }
  }

  for (const auto& kv : states_) {
    const BlobState& st = kv.second;
    C2_ENFORCE(st.complete, "blob '", kv.first, "' is incomplete: the chunks in ",
               db_labels_[st.db_index], " cover ", st.loaded, " of its ", st.total, " elements");
  }
  if (load_all_ || complete_outputs_ == OutputSize()) {
    C2_LOG(Info) << "Load: read "
                 << (load_all_ ? states_.size() : static_cast<size_t>(complete_outputs_))
                 << " blob(s) from " << JoinedLabels();
    return true;
  }
  std::string missing;
  for (const auto& kv : output_indices_) {
    if (!states_.count(kv.first)) missing += (missing.empty() ? "'" : ", '") + kv.first + "'";
  }
  const std::string searched = JoinedLabels();
  if (allow_incomplete_) {
    C2_LOG(Info) << "Load: " << missing << " not found in " << searched << " (allow_incomplete)";
    return true;
  }
  C2_THROW("Expected to load ", OutputSize(), " blobs, got ", complete_outputs_, " only. ",
           "Missing: ", missing, " (searched ", searched, ")");
}

std::string LoadOp::JoinedLabels() const {
  std::string joined;
  for (const std::string& label : db_labels_) joined += (joined.empty() ? "" : ", ") + label;
  return joined;
}

void LoadOp::Extract(db::Cursor* cursor, int db_index, const std::string& db_label) {
  auto done = [this] { return !load_all_ && complete_outputs_ == OutputSize(); };
  if (done()) return;
  while (cursor->Valid()) {
    const std::string db_key = cursor->key();
    const std::string name = BlobNameFromKey(db_key);
    Blob* blob = nullptr;
    if (load_all_) {
      blob = workspace()->CreateBlob(name);
    } else {
      auto it = output_indices_.find(name);
      if (it != output_indices_.end()) blob = OutputBlob(it->second);
    }
    if (blob != nullptr) {
      LoadRecord(db_key, name, cursor->value(), blob, db_index, db_label);
      if (done()) return;  // leaves a reader on the last record consumed
    }
    cursor->Next();
  }
}

void LoadOp::RefuseRepeats(db::Cursor* cursor, const std::string& db_label) const {
  for (; cursor->Valid(); cursor->Next()) {
    const std::string name = BlobNameFromKey(cursor->key());
    const auto it = states_.find(name);
    C2_ENFORCE(it == states_.end(), "blob '", name,
               "' is present in two DBs: ", db_labels_[it->second.db_index], " and ", db_label,
               " (key '", cursor->key(), "')");
  }
}

void LoadOp::LoadRecord(const std::string& db_key, const std::string& blob_name,
                        const std::string& value, Blob* blob, int db_index,
                        const std::string& db_label) {
  BlobProto proto;
  C2_ENFORCE(proto.ParseFromString(value), "record '", db_key, "' of ", db_label,
             " is not a serialized BlobProto (", value.size(), " bytes)");
  BlobState& st = states_[blob_name];
  const bool first = st.db_index < 0;
  const bool is_tensor = proto.type() == kTensorBlobType;
  if (first) {
    st.db_index = db_index;
    st.is_tensor = is_tensor;
    // A reader restored into an existing reader of the same DB keeps its sharding.
    if (!(proto.type() == "DBReader" && blob->IsType<db::DBReader>())) blob->Reset();
  } else {
    C2_ENFORCE(st.db_index == db_index, "blob '", blob_name,
               "' is present in two DBs: ", db_labels_[st.db_index], " and ", db_label, " (key '",
               db_key, "')");
    C2_ENFORCE(!st.complete, "record '", db_key, "' of ", db_label, " repeats blob '", blob_name,
               "', which was already loaded in full");
    C2_ENFORCE(is_tensor && st.is_tensor, "blob '", blob_name,
               "' has records of different types in ", db_label, " (key '", db_key,
               "' is of type '", proto.type(), "')");
  }
  try {
    if (!is_tensor) {
      DeserializeBlob(proto, blob);
      st.complete = true;
    } else {
      TensorProto* tp = proto.mutable_tensor();
      // Strings live on the CPU whatever the op's device.
      if (!keep_device_ && tp->data_type() != TensorProto::STRING) {
        if (device().type == kCPU) {
          tp->clear_device_detail();
        } else {
          tp->mutable_device_detail()->set_device_type(device().type);
          tp->mutable_device_detail()->set_cuda_gpu_id(device().id);
        }
      }
      const int64_t total =
          CheckedNumel(std::vector<int64_t>(tp->dims().begin(), tp->dims().end()));
      const int64_t begin = tp->has_segment() ? tp->segment().begin() : 0;
      const int64_t end = tp->has_segment() ? tp->segment().end() : total;
      if (first) st.total = total;
      C2_ENFORCE(total == st.total, "its chunks disagree on its size (", st.total, " vs ", total,
                 " elements)");
      C2_ENFORCE(st.segments.insert(begin).second, "the chunk starting at element ", begin,
                 " appears twice");
      DeserializeBlob(proto, blob);
      st.loaded += end - begin;
      C2_ENFORCE(st.loaded <= st.total, "its chunks cover ", st.loaded, " elements, more than its ",
                 st.total);
      st.complete = st.loaded == st.total;
    }
  } catch (const std::exception& e) {
    C2_THROW("cannot load blob '", blob_name, "' from record '", db_key, "' of ", db_label, ": ",
             e.what());
  }
  if (st.complete && !load_all_) ++complete_outputs_;
}

REGISTER_CPU_OPERATOR(Load, LoadOp);
// Device-neutral: tensors reach the op's GPU through CopyBytes (an error on a CPU-only build).
REGISTER_CUDA_OPERATOR(Load, LoadOp);

OPERATOR_SCHEMA(Load)
    .NumInputs(0, OpSchema::kInf)
    .NumOutputs(0, OpSchema::kInf)
    .SetDoc(R"DOC(
Loads blobs saved by Save from `db`/`dbs` (or from DBReader inputs, read from their current
position). Record keys are matched to the output names (or `source_blob_names`) after dropping the
chunk suffix, applying `strip_prefix` and prepending `add_prefix`; `load_all` loads every record.
Tensors go to this op's device unless `keep_device`.
)DOC")
    .Arg("absolute_path",
         "(int, default 0) use the DB paths as given instead of under the root folder")
    .Arg("add_prefix", "(string) prepended to every loaded blob name")
    .Arg("strip_prefix", "(string) removed (with everything before it) from every loaded blob name")
    .Arg("db", "(string) the DB path")
    .Arg("dbs", "(strings) several DB paths")
    .Arg("db_type", "(string) the DB type (required without DBReader inputs)")
    .Arg("keep_device", "(int, default 0) keep each tensor's saved device")
    .Arg("load_all", "(int, default 0) load every blob of the DBs")
    .Arg("allow_incomplete", "(bool, default false) allow outputs missing from the DBs")
    .Arg("source_blob_names", "(strings) the saved names to load into the outputs, one per output")
    .Input(0, "reader", "optional DBReader blobs to read from")
    .Output(0, "X", "the loaded blobs");

REGISTER_GRADIENT(Load, NoGradient);

}  // namespace caffe2
