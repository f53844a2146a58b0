// FileStoreHandler: a StoreHandler on a shared directory (ops spec §3.2).
//
// Layout: base = realpath(path), plus "/" + EncodeStoreName(prefix) when prefix is not empty
// (created with mode 0777, an existing directory is fine). Key k lives in base/EncodeStoreName(k).
// set writes a hidden temporary file in base and renames it over the object, so a reader sees
// either nothing or the whole value; an existing value is overwritten silently. Files are never
// deleted: reusing path + prefix finds the previous run's keys (use a fresh run id).
//
// With a prefix, the run directory also holds a hidden file .c2_run_id with the prefix in plain
// text (extension; upstream ignores it), so that a rendezvous can name the run id a peer used.
//
// Differences from upstream, all of them turning aborts into errors: a path that does not exist or
// is not a directory throws (upstream aborts in realpath's CHECK); add is implemented (upstream
// aborts) as a read-modify-write of a decimal string under an flock on base/.lock.
#pragma once

#include <mutex>
#include <string>
#include <vector>

#include "distributed/store/store_handler.h"

namespace caffe2 {

// MurmurHash3_x64_128(s, seed 0xcafef00d) as 32 hex characters, each byte printed the way upstream
// does it (as a signed char, so bytes >= 0x80 print as "ff").
std::string EncodeStoreName(const std::string& name);

class FileStoreHandler final : public StoreHandler {
 public:
  FileStoreHandler(const std::string& path, const std::string& prefix);

  void set(const std::string& name, const std::string& data) override;
  std::string get(const std::string& name,
                  std::chrono::milliseconds timeout = kDefaultTimeout) override;
  int64_t add(const std::string& name, int64_t value) override;
  bool check(const std::vector<std::string>& names) override;
  void wait(const std::vector<std::string>& names,
            std::chrono::milliseconds timeout = kDefaultTimeout) override;
  // Writes a temporary file and link(2)s it to the object path: fails atomically when it exists.
  bool setIfAbsent(const std::string& name, const std::string& data) override;
  // Scans the sibling run directories of path (each names its run id in a hidden .c2_run_id file).
  std::vector<std::pair<std::string, std::string>> OtherNamespacesHolding(
      const std::string& name) override;

  const std::string& base_path() const { return base_; }

 private:
  std::string ObjectPath(const std::string& name) const;
  void WriteAtomically(const std::string& name, const std::string& data);
  // Writes `data` to a fresh hidden temporary file in base and returns its path.
  std::string WriteTemporary(const std::string& name, const std::string& data);
  std::string ReadFile(const std::string& name) const;

  std::string root_;      // realpath(path)
  std::string base_;      // root_, or root_/EncodeStoreName(prefix)
  std::mutex add_mutex_;  // flock is per open file description; threads also serialise here
};

}  // namespace caffe2
