#include "core/op_alias.h"

#include <map>
#include <mutex>

#include "core/enforce.h"

namespace caffe2 {
namespace {

constexpr char kEngineMark[] = "_ENGINE_";
constexpr char kGradient[] = "Gradient";

struct AliasTable {
  std::mutex mutex;
  std::map<std::string, std::string> targets;  // alias -> target
};

AliasTable& Table() {
  static auto* table = new AliasTable();
  return *table;
}

bool EndsWith(const std::string& s, const std::string& tail) {
  return s.size() >= tail.size() && s.compare(s.size() - tail.size(), tail.size(), tail) == 0;
}

}  // namespace

bool RegisterOperatorAlias(const std::string& alias, const std::string& target) {
  AliasTable& table = Table();
  std::lock_guard<std::mutex> lock(table.mutex);
  C2_ENFORCE(table.targets.emplace(alias, target).second, "operator alias ", alias,
             " declared twice");
  return true;
}

std::string OperatorAliasTarget(const std::string& key) {
  const size_t engine_at = key.find(kEngineMark);
  const std::string type = key.substr(0, engine_at);
  const std::string engine = engine_at == std::string::npos ? "" : key.substr(engine_at);
  AliasTable& table = Table();
  std::lock_guard<std::mutex> lock(table.mutex);
  auto it = table.targets.find(type);
  if (it != table.targets.end()) return it->second + engine;
  if (EndsWith(type, kGradient)) {
    it = table.targets.find(type.substr(0, type.size() - sizeof(kGradient) + 1));
    if (it != table.targets.end()) return it->second + kGradient + engine;
  }
  return "";
}

std::vector<std::string> AliasKeys(const std::vector<std::string>& keys) {
  AliasTable& table = Table();
  std::lock_guard<std::mutex> lock(table.mutex);
  std::vector<std::string> out;
  for (const auto& [alias, target] : table.targets) {
    for (const std::string& key : keys) {
      if (key.compare(0, target.size(), target) != 0) continue;
      const std::string rest = key.substr(target.size());  // "", "Gradient", "_ENGINE_X", ...
      const std::string bare = rest.compare(0, sizeof(kGradient) - 1, kGradient) == 0
                                   ? rest.substr(sizeof(kGradient) - 1)
                                   : rest;
      if (bare.empty() || bare.compare(0, sizeof(kEngineMark) - 1, kEngineMark) == 0) {
        out.push_back(alias + rest);
      }
    }
  }
  return out;
}

}  // namespace caffe2
