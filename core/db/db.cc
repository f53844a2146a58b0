#include "core/db/db.h"

#include <map>
#include <mutex>

#include "core/enforce.h"

namespace caffe2 {
namespace db {
namespace {

struct DBRegistry {
  std::mutex mutex;
  std::map<std::string, DBCreator> creators;
};

DBRegistry& Registry() {
  static auto* registry = new DBRegistry();
  return *registry;
}

DBCreator Find(const std::string& type) {
  auto& r = Registry();
  std::lock_guard<std::mutex> lock(r.mutex);
  auto it = r.creators.find(type);
  return it == r.creators.end() ? DBCreator() : it->second;
}

std::string KnownTypes() {
  std::string known;
  for (const std::string& name : RegisteredDBs()) known += (known.empty() ? "" : ", ") + name;
  return known;
}

}  // namespace

const char* ModeName(Mode mode) {
  switch (mode) {
    case READ:
      return "READ";
    case WRITE:
      return "WRITE";
    case NEW:
      return "NEW";
  }
  return "UNKNOWN";
}

bool RegisterDB(const std::string& name, DBCreator creator) {
  auto& r = Registry();
  std::lock_guard<std::mutex> lock(r.mutex);
  r.creators[name] = std::move(creator);
  return true;
}

std::vector<std::string> RegisteredDBs() {
  auto& r = Registry();
  std::lock_guard<std::mutex> lock(r.mutex);
  std::vector<std::string> names;
  for (const auto& kv : r.creators) names.push_back(kv.first);
  return names;
}

std::unique_ptr<DB> CreateDB(const std::string& type, const std::string& source, Mode mode) {
  DBCreator creator = Find(type);
  if (!creator) return nullptr;
  try {
    return creator(source, mode);
  } catch (const std::exception& e) {
    C2_THROW("Cannot open ", type, " DB '", source, "' in ", ModeName(mode), " mode: ", e.what());
  }
}

bool DBExists(const std::string& type, const std::string& path) {
  DBCreator creator = Find(type);
  C2_ENFORCE(creator, "Unknown DB type '", type, "' (registered: ", KnownTypes(), ")");
  try {
    return creator(path, READ) != nullptr;
  } catch (const std::exception&) {
    return false;
  }
}

}  // namespace db
}  // namespace caffe2
