#include "core/workspace.h"

#include <algorithm>

#include "core/logging.h"
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

void Workspace::AddBlobMapping(Workspace* parent, const std::map<std::string, std::string>& forwarded) {
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

NetBase* Workspace::CreateNet(const NetDef& def, bool overwrite) {
  C2_ENFORCE(def.has_name() && !def.name().empty(), "A net must have a name to be created");
  auto it = net_map_.find(def.name());
  if (it != net_map_.end()) {
    C2_ENFORCE(overwrite, "I respectfully refuse to overwrite an existing net of the same name \"",
               def.name(), "\", unless you explicitly specify overwrite=true.");
    net_map_.erase(it);
  }
  auto net = caffe2::CreateNet(def, this);
  NetBase* ptr = net.get();
  net_map_[def.name()] = std::move(net);
  return ptr;
}

NetBase* Workspace::GetNet(const std::string& name) {
  auto it = net_map_.find(name);
  return it == net_map_.end() ? nullptr : it->second.get();
}

void Workspace::DeleteNet(const std::string& name) { net_map_.erase(name); }

bool Workspace::RunNet(const std::string& name) {
  NetBase* net = GetNet(name);
  C2_ENFORCE(net != nullptr, "Can't find net ", name);
  return net->Run();
}

std::vector<std::string> Workspace::Nets() const {
  std::vector<std::string> names;
  for (const auto& kv : net_map_) names.push_back(kv.first);
  return names;
}

void Workspace::RunOperatorOnce(const OperatorDef& def) {
  auto op = CreateOperator(def, this);
  C2_ENFORCE(op->Run(), "[", def.type(), "] the operator reported failure");
}

bool Workspace::RunNetOnce(const NetDef& def) {
  auto net = caffe2::CreateNet(def, this);
  return net->Run();
}

bool Workspace::RunPlan(const PlanDef& plan, std::function<bool(int)> should_continue) {
  return RunPlanOnWorkspace(this, plan, std::move(should_continue));
}

ThreadPool* Workspace::GetThreadPool() {
  std::lock_guard<std::mutex> lock(pool_mutex_);
  if (!thread_pool_) thread_pool_ = std::make_unique<ThreadPool>(ThreadPool::DefaultSize());
  return thread_pool_.get();
}

}  // namespace caffe2
