// Workspace: the named blobs and nets of one run (spec §5.2).
//
// Blob and net names are kept sorted. A workspace may have a parent (`shared`): lookups fall
// through to it, and CreateBlob returns the parent's blob when the parent has one (so writes go
// there). Blobs can also be forwarded from another workspace under a local name. The root folder
// prefixes relative DB paths of Save/Load/DBExists.
//
// Threads: a workspace may be used from several threads at once. While something runs in it (a net
// through RunNet/WithNetRun, RunNetOnce, RunOperatorOnce, RunPlan), what that run reads stays put:
// the workspace refuses, with an error naming the run, to delete or overwrite the running net, and
// CheckBlobFree/CheckIdle let callers (the Python bindings) refuse to feed or remove a blob the run
// uses, or to reset the workspace. Other blobs and nets may be used meanwhile (data workers feed
// their own blobs while a net runs).
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "caffe2/proto/caffe2.pb.h"
#include "core/blob.h"

namespace caffe2 {

class NetBase;
class ThreadPool;

class Workspace {
 public:
  Workspace() : Workspace(".", nullptr) {}
  explicit Workspace(const std::string& root_folder) : Workspace(root_folder, nullptr) {}
  explicit Workspace(Workspace* shared) : Workspace(shared ? shared->RootFolder() : ".", shared) {}
  Workspace(const std::string& root_folder, Workspace* shared);
  // Forwards parent blobs under local names: {local name: parent name}.
  Workspace(Workspace* parent, const std::map<std::string, std::string>& forwarded_blobs);
  ~Workspace();
  Workspace(const Workspace&) = delete;
  Workspace& operator=(const Workspace&) = delete;

  const std::string& RootFolder() const { return root_folder_; }

  bool HasBlob(const std::string& name) const;
  // The existing blob (also from a parent) or a new local one.
  Blob* CreateBlob(const std::string& name);
  Blob* CreateLocalBlob(const std::string& name);
  // Null when missing.
  const Blob* GetBlob(const std::string& name) const;
  Blob* GetBlob(const std::string& name);
  bool RemoveBlob(const std::string& name);
  bool RenameBlob(const std::string& old_name, const std::string& new_name);
  void AddBlobMapping(Workspace* parent, const std::map<std::string, std::string>& forwarded);
  // Local blobs, sorted.
  std::vector<std::string> LocalBlobs() const;
  // Local blobs, then forwarded ones, then the parent's.
  std::vector<std::string> Blobs() const;

  // Creates (and keeps) a net; refuses to replace an existing one unless overwrite, and a running
  // one.
  NetBase* CreateNet(const NetDef& def, bool overwrite = false);
  NetBase* GetNet(const std::string& name);
  // Refuses a running net.
  void DeleteNet(const std::string& name);
  // Throws when the net does not exist or an op fails; false when an op returns false.
  bool RunNet(const std::string& name);
  // Calls fn with the named net while its run is registered (the net cannot be deleted meanwhile).
  void WithNetRun(const std::string& name, const std::function<void(NetBase*)>& fn);
  std::vector<std::string> Nets() const;

  // Throws, naming the run, when something runs in this workspace: `what` names the refused action.
  void CheckIdle(const std::string& what) const;
  // Throws, naming the run, when a running net or operator uses blob `name`.
  void CheckBlobFree(const std::string& name, const std::string& what) const;

  void RunOperatorOnce(const OperatorDef& def);
  bool RunNetOnce(const NetDef& def);
  // Runs a plan (spec §5.8); should_continue is polled between iterations.
  bool RunPlan(
      const PlanDef& plan, std::function<bool(int)> should_continue = [](int) { return true; });

  // Position of the last op that failed with a net position, -1 when none (read by Python).
  std::atomic<int> last_failed_op_net_position{-1};

  // Shared pool for DAG nets and concurrent plan steps, created on first use.
  ThreadPool* GetThreadPool();

 private:
  std::string root_folder_;
  Workspace* shared_ = nullptr;
  std::map<std::string, std::unique_ptr<Blob>> blob_map_;
  std::map<std::string, std::pair<Workspace*, std::string>> forwarded_blobs_;
  // A run in progress: what it is, the net's name ("" when not a kept net) and the blobs it uses
  // (null: every blob).
  struct ActiveRun {
    std::string what, net;
    std::shared_ptr<const std::set<std::string>> blobs;
  };
  class RunScope;
  uint64_t BeginRunLocked(ActiveRun run);
  void EndRun(uint64_t id);
  // Throws when net `name` exists and may not be replaced (no overwrite, or it runs); net_mutex_
  // held.
  void CheckReplaceableLocked(const std::string& name, bool overwrite) const;

  std::map<std::string, std::unique_ptr<NetBase>> net_map_;
  std::map<std::string, std::shared_ptr<const std::set<std::string>>> net_blobs_;
  mutable std::mutex net_mutex_;  // net_map_, net_blobs_; taken before run_mutex_
  mutable std::mutex run_mutex_;
  std::map<uint64_t, ActiveRun> runs_;
  uint64_t next_run_ = 0;
  mutable std::mutex blob_mutex_;
  std::mutex pool_mutex_;
  std::unique_ptr<ThreadPool> thread_pool_;
};

}  // namespace caffe2
