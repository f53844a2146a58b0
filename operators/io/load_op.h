// Load: restores blobs from DBs written by Save (spec §5.12, compatibility details 3, 5 and 18).
//
// Inputs: none (the op opens `db` and/or `dbs` itself), or DBReader blobs (from CreateDB) whose
// cursors are consumed from their current position: a reader is not rewound and is left on the
// last record consumed. Outputs: the blobs to load (none with load_all).
// Arguments:
//   db (string), dbs (strings)  DB paths, relative to the root folder unless absolute_path (0)
//   db_type (string)            required without reader inputs
//   add_prefix, strip_prefix    each record's blob name is its key up to the first "#%", minus
//                               everything up to and including the first strip_prefix match, with
//                               add_prefix prepended
//   source_blob_names (strings) the names to look for, one per output (default: the output names)
//   load_all (int, 0)           load every record into a blob of its name instead
//   keep_device (int, 0)        keep the device recorded with each tensor; by default tensors are
//                               placed on this op's device
//   allow_incomplete (bool, 0)  do not fail when some outputs are missing from the DBs
//
// A tensor may arrive in several chunks; the op checks that the chunks cover it exactly once and
// stops reading as soon as every output is complete. A blob found in two DBs, a repeated chunk or
// an incomplete tensor are errors, as is a missing output: "Expected to load N blobs, got M only."
#pragma once

#include <map>
#include <set>
#include <string>
#include <vector>

#include "core/db/db.h"
#include "core/operator.h"

namespace caffe2 {

class LoadOp final : public OperatorBase {
 public:
  LoadOp(const OperatorDef& def, Workspace* ws);

 protected:
  bool RunOnDevice() override;

 private:
  struct BlobState {
    int db_index = -1;
    bool is_tensor = false;
    bool complete = false;
    int64_t total = 0;           // elements of the whole tensor
    int64_t loaded = 0;          // elements loaded so far
    std::set<int64_t> segments;  // begin of every chunk seen
  };

  // Reads records from `cursor` until it is exhausted or (without load_all) every output is done.
  void Extract(db::Cursor* cursor, int db_index, const std::string& db_label);
  // Once every requested blob is loaded, a later DB of `dbs` may not hold one of them again (the
  // same DB twice, or two checkpoints of one blob): raises naming both DBs.
  void RefuseRepeats(db::Cursor* cursor, const std::string& db_label) const;
  // The labels of the DBs read, comma separated (for messages).
  std::string JoinedLabels() const;
  void LoadRecord(const std::string& db_key, const std::string& blob_name, const std::string& value,
                  Blob* blob, int db_index, const std::string& db_label);
  std::string BlobNameFromKey(const std::string& db_key) const;

  std::string db_type_, add_prefix_, strip_prefix_;
  std::vector<std::string> db_paths_;
  bool keep_device_ = false;
  bool load_all_ = false;
  bool allow_incomplete_ = false;
  std::map<std::string, int> output_indices_;
  std::vector<std::string> db_labels_;
  // Per run.
  std::map<std::string, BlobState> states_;
  int complete_outputs_ = 0;
};

}  // namespace caffe2
