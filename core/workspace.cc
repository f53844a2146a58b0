#include "core/workspace.h"

#include <algorithm>

#include "core/logging.h"
#include "core/name_suggestions.h"
#include "core/net.h"
#include "core/plan_executor.h"
#include "core/thread_pool.h"

namespace caffe2 {

Workspace::Workspace(const std::string& root_folder, Workspace* shared)
    : root_folder_(root_folder), shared_(shared) {}

Workspace::Workspace(Workspace* parent, const std::map<std::string, std::string>& forwarded_blobs)
    : root_folder_(parent ? parent->RootFolder() : ".") {
  AddBlobMapping(parent, forwarded_blobs);
}

Workspace::~Workspace() {
  // Nets hold pointers into blobs: destroy them first.
  net_map_.clear();
}

bool Workspace::HasBlob(const std::string& name) const { return GetBlob(name) != nullptr; }

Blob* Workspace::CreateBlob(const std::string& name) {
  if (Blob* existing = GetBlob(name)) return existing;
  return CreateLocalBlob(name);
}

Blob* Workspace::CreateLocalBlob(const std::string& name) {
  std::lock_guard<std::mutex> lock(blob_mutex_);
  auto& slot = blob_map_[name];
  if (!slot) slot = std::make_unique<Blob>();
  return slot.get();
}

const Blob* Workspace::GetBlob(const std::string& name) const {
  return const_cast<Workspace*>(this)->GetBlob(name);
}

Blob* Workspace::GetBlob(const std::string& name) {
  {
    std::lock_guard<std::mutex> lock(blob_mutex_);
    auto it = blob_map_.find(name);
    if (it != blob_map_.end()) return it->second.get();
    auto fw = forwarded_blobs_.find(name);
    if (fw != forwarded_blobs_.end()) return fw->second.first->GetBlob(fw->second.second);
  }
  return shared_ ? shared_->GetBlob(name) : nullptr;
}

bool Workspace::RemoveBlob(const std::string& name) {
  std::lock_guard<std::mutex> lock(blob_mutex_);
  return blob_map_.erase(name) > 0 || forwarded_blobs_.erase(name) > 0;
}

bool Workspace::RenameBlob(const std::string& old_name, const std::string& new_name) {
  std::lock_guard<std::mutex> lock(blob_mutex_);
  auto it = blob_map_.find(old_name);
  C2_ENFORCE(it != blob_map_.end(), "Cannot rename blob ", old_name, ": it is not a local blob");
  C2_ENFORCE(blob_map_.count(new_name) == 0, "Cannot rename blob ", old_name, " to ", new_name,
             ": that name is taken");
  blob_map_[new_name] = std::move(it->second);
  blob_map_.erase(old_name);
  return true;
}

void Workspace::AddBlobMapping(Workspace* parent,
                               const std::map<std::string, std::string>& forwarded) {
  C2_ENFORCE(parent != nullptr, "AddBlobMapping needs a parent workspace");
  std::lock_guard<std::mutex> lock(blob_mutex_);
  for (const auto& kv : forwarded) {
    C2_ENFORCE(parent->HasBlob(kv.second), "Cannot forward blob ", kv.second,
               ": the parent workspace does not have it");
    C2_ENFORCE(blob_map_.count(kv.first) == 0, "Cannot forward blob ", kv.second, " as ", kv.first,
               ": a local blob of that name exists");
    forwarded_blobs_[kv.first] = {parent, kv.second};
  }
}

std::vector<std::string> Workspace::LocalBlobs() const {
  std::lock_guard<std::mutex> lock(blob_mutex_);
  std::vector<std::string> names;
  for (const auto& kv : blob_map_) names.push_back(kv.first);
  return names;
}

std::vector<std::string> Workspace::Blobs() const {
  std::vector<std::string> names = LocalBlobs();
  {
    std::lock_guard<std::mutex> lock(blob_mutex_);
    for (const auto& kv : forwarded_blobs_) names.push_back(kv.first);
  }
  if (shared_) {
    for (const auto& name : shared_->Blobs()) names.push_back(name);
  }
  return names;
}

namespace {

// Every blob an op or net names (inputs, outputs, external inputs and outputs).
std::shared_ptr<const std::set<std::string>> BlobsOf(const NetDef& def) {
  auto blobs = std::make_shared<std::set<std::string>>(def.external_input().begin(),
                                                       def.external_input().end());
  blobs->insert(def.external_output().begin(), def.external_output().end());
  for (const OperatorDef& op : def.op()) {
    blobs->insert(op.input().begin(), op.input().end());
    blobs->insert(op.output().begin(), op.output().end());
  }
  return blobs;
}

}  // namespace

// Registers a run for its lifetime.
class Workspace::RunScope {
 public:
  RunScope(Workspace* ws, uint64_t id) : ws_(ws), id_(id) {}
  RunScope(Workspace* ws, ActiveRun run) : ws_(ws) {
    std::lock_guard<std::mutex> lock(ws->run_mutex_);
    id_ = ws->BeginRunLocked(std::move(run));
  }
  ~RunScope() { ws_->EndRun(id_); }
  RunScope(const RunScope&) = delete;
  RunScope& operator=(const RunScope&) = delete;

 private:
  Workspace* ws_;
  uint64_t id_;
};

uint64_t Workspace::BeginRunLocked(ActiveRun run) {
  const uint64_t id = next_run_++;
  runs_.emplace(id, std::move(run));
  return id;
}

void Workspace::EndRun(uint64_t id) {
  std::lock_guard<std::mutex> lock(run_mutex_);
  runs_.erase(id);
}

void Workspace::CheckIdle(const std::string& what) const {
  std::lock_guard<std::mutex> lock(run_mutex_);
  C2_ENFORCE(runs_.empty(), "Cannot ", what, " while ", runs_.begin()->second.what,
             " runs in this workspace (from another thread); wait for it to finish");
}

void Workspace::CheckBlobFree(const std::string& name, const std::string& what) const {
  std::lock_guard<std::mutex> lock(run_mutex_);
  for (const auto& kv : runs_) {
    const ActiveRun& run = kv.second;
    C2_ENFORCE(
        run.blobs && !run.blobs->count(name), "Cannot ", what, " blob '", name, "' while ",
        run.what,
        ", which uses it, runs in this workspace (from another thread); wait for it to finish");
  }
}

void Workspace::CheckReplaceableLocked(const std::string& name, bool overwrite) const {
  if (net_map_.count(name) == 0) return;
  C2_ENFORCE(overwrite, "I respectfully refuse to overwrite an existing net of the same name \"",
             name, "\", unless you explicitly specify overwrite=true.");
  std::lock_guard<std::mutex> runs(run_mutex_);
  for (const auto& kv : runs_) {
    C2_ENFORCE(kv.second.net != name, "Cannot overwrite net '", name,
               "' while it runs (from another thread); wait for it to finish");
  }
}

NetBase* Workspace::CreateNet(const NetDef& def, bool overwrite) {
  // As upstream: the name must be set, and the empty string is a name (Python names the first
  // unnamed core.Net "").
  C2_ENFORCE(def.has_name(), "A net must have a name to be created");
  {
    std::lock_guard<std::mutex> lock(net_mutex_);
    CheckReplaceableLocked(def.name(), overwrite);  // before the work of creating the net
  }
  auto net = caffe2::CreateNet(def, this);
  std::lock_guard<std::mutex> lock(net_mutex_);
  CheckReplaceableLocked(def.name(), overwrite);  // again: another thread may have acted meanwhile
  NetBase* ptr = net.get();
  net_map_[def.name()] = std::move(net);
  net_blobs_[def.name()] = BlobsOf(def);
  return ptr;
}

NetBase* Workspace::GetNet(const std::string& name) {
  std::lock_guard<std::mutex> lock(net_mutex_);
  auto it = net_map_.find(name);
  return it == net_map_.end() ? nullptr : it->second.get();
}

void Workspace::DeleteNet(const std::string& name) {
  std::lock_guard<std::mutex> lock(net_mutex_);
  {
    std::lock_guard<std::mutex> runs(run_mutex_);
    for (const auto& kv : runs_) {
      C2_ENFORCE(kv.second.net != name, "Cannot delete net '", name,
                 "' while it runs (from another thread); wait for it to finish");
    }
  }
  net_map_.erase(name);
  net_blobs_.erase(name);
}

void Workspace::WithNetRun(const std::string& name, const std::function<void(NetBase*)>& fn) {
  NetBase* net = nullptr;
  std::unique_ptr<RunScope> scope;
  {
    std::lock_guard<std::mutex> lock(net_mutex_);
    auto it = net_map_.find(name);
    if (it == net_map_.end()) {
      std::vector<std::string> names;
      for (const auto& kv : net_map_) names.push_back(kv.first);
      C2_THROW("Can't find net ", name, DidYouMean(name, names),
               ": create it first with workspace.CreateNet(net) (or run it once with "
               "workspace.RunNetOnce(net))");
    }
    net = it->second.get();
    std::lock_guard<std::mutex> runs(run_mutex_);
    scope = std::make_unique<RunScope>(
        this, BeginRunLocked({"net '" + name + "'", name, net_blobs_[name]}));
  }
  fn(net);
}

bool Workspace::RunNet(const std::string& name) {
  bool ok = false;
  WithNetRun(name, [&](NetBase* net) { ok = net->Run(); });
  return ok;
}

std::vector<std::string> Workspace::Nets() const {
  std::lock_guard<std::mutex> lock(net_mutex_);
  std::vector<std::string> names;
  for (const auto& kv : net_map_) names.push_back(kv.first);
  return names;
}

void Workspace::RunOperatorOnce(const OperatorDef& def) {
  NetDef one;
  *one.add_op() = def;
  RunScope scope(this, {"operator " + def.type(), "", BlobsOf(one)});
  auto op = CreateOperator(def, this);
  C2_ENFORCE(op->Run(), "[", def.type(), "] the operator reported failure");
}

bool Workspace::RunNetOnce(const NetDef& def) {
  RunScope scope(this, {"net '" + def.name() + "' (RunNetOnce)", "", BlobsOf(def)});
  auto net = caffe2::CreateNet(def, this);
  return net->Run();
}

bool Workspace::RunPlan(const PlanDef& plan, std::function<bool(int)> should_continue) {
  auto blobs = std::make_shared<std::set<std::string>>();
  for (const NetDef& net : plan.network()) {
    const auto of_net = BlobsOf(net);
    blobs->insert(of_net->begin(), of_net->end());
  }
  RunScope scope(this, {"plan '" + plan.name() + "'", "", blobs});
  return RunPlanOnWorkspace(this, plan, std::move(should_continue));
}

ThreadPool* Workspace::GetThreadPool() {
  std::lock_guard<std::mutex> lock(pool_mutex_);
  if (!thread_pool_) thread_pool_ = std::make_unique<ThreadPool>(ThreadPool::DefaultSize());
  return thread_pool_.get();
}

}  // namespace caffe2
