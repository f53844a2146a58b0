// Save: writes blobs into a new DB (spec §5.12).
//
// Inputs: the blobs to save (at least one). Outputs: none.
// Arguments:
//   db (string, required)       the DB path; relative to the workspace root folder unless
//                               absolute_path (int, 0) is set
//   db_type (string, required)  a registered DB type: minidb, lmdb, leveldb
//   strip_prefix (string, "")   each name loses everything up to and including the first match
//   blob_name_overrides (strings) the names to write instead of the input names, one per input;
//                               exclusive with strip_prefix
//
// The DB is created in NEW mode (minidb truncates; lmdb and leveldb refuse an existing path).
// Records follow the input order; tensors are chunked as `<name>#%<chunk>` (see
// core/serialization.h), other blobs use the bare name. Names must be unique after renaming.
//
// The op is device-neutral (CUDA tensors are copied to the host through CopyBytes); it is
// registered for CPU and CUDA, as are Load, Checkpoint and CreateDB.
#pragma once

#include <string>
#include <vector>

#include "core/operator.h"

namespace caffe2 {

class SaveOp : public OperatorBase {
 public:
  SaveOp(const OperatorDef& def, Workspace* ws);

 protected:
  bool RunOnDevice() override;
  // Writes every input into a new DB at `path` (already resolved against the root folder).
  void SaveTo(const std::string& path);

  std::string db_pattern_;
  std::string db_type_;
  bool absolute_path_ = false;
  std::vector<std::string> names_;
};

}  // namespace caffe2
