// The DB path rule shared by Save, Load, Checkpoint and DBExists (spec §5.12): a relative `db` is
// resolved against the workspace root folder unless absolute_path is set.
#pragma once

#include <string>

#include "core/db/db.h"
#include "core/workspace.h"

namespace caffe2 {

inline std::string FullDBPath(const Workspace& ws, const std::string& db, bool absolute_path) {
  return absolute_path ? db : ws.RootFolder() + "/" + db;
}

// "leveldb, lmdb, minidb, ..." for error messages about an unknown db_type.
inline std::string RegisteredDBsString() {
  std::string known;
  for (const std::string& name : db::RegisteredDBs()) known += (known.empty() ? "" : ", ") + name;
  return known;
}

}  // namespace caffe2
