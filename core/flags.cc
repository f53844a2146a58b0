#include "core/flags.h"

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <limits>
#include <map>
#include <mutex>

#include "core/enforce.h"

namespace caffe2 {
namespace {

std::map<std::string, FlagInfo>& Registry() {
  static auto* registry = new std::map<std::string, FlagInfo>();
  return *registry;
}

template <class T>
bool ParseInteger(const std::string& s, T* out) {
  if (s.empty()) return false;
  char* end = nullptr;
  errno = 0;
  long long v = std::strtoll(s.c_str(), &end, 10);
  if (errno != 0 || *end != '\0') return false;
  if (v < static_cast<long long>(std::numeric_limits<T>::min()) ||
      v > static_cast<long long>(std::numeric_limits<T>::max())) {
    return false;
  }
  *out = static_cast<T>(v);
  return true;
}

}  // namespace

namespace detail {
bool ParseFlagValue(const std::string& s, int* out) { return ParseInteger(s, out); }
bool ParseFlagValue(const std::string& s, int64_t* out) { return ParseInteger(s, out); }
bool ParseFlagValue(const std::string& s, bool* out) {
  std::string v = s;
  std::transform(v.begin(), v.end(), v.begin(), ::tolower);
  if (v == "1" || v == "true" || v == "yes" || v.empty()) {
    *out = true;
  } else if (v == "0" || v == "false" || v == "no") {
    *out = false;
  } else {
    return false;
  }
  return true;
}
bool ParseFlagValue(const std::string& s, double* out) {
  if (s.empty()) return false;
  char* end = nullptr;
  *out = std::strtod(s.c_str(), &end);
  return *end == '\0';
}
bool ParseFlagValue(const std::string& s, std::string* out) {
  *out = s;
  return true;
}
}  // namespace detail

bool RegisterFlag(const std::string& name, FlagInfo info) {
  Registry()[name] = std::move(info);
  return true;
}

void SetFlag(const std::string& name, const std::string& value) {
  auto it = Registry().find(name);
  C2_ENFORCE(it != Registry().end(), "Unknown flag --", name);
  C2_ENFORCE(it->second.parse(value), "Flag --", name, " expects a value of type ", it->second.type,
             ", got '", value, "'");
}

void ParseFlags(const std::vector<std::string>& args, std::vector<std::string>* rest) {
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& arg = args[i];
    if (arg.rfind("--", 0) != 0) {
      if (rest) rest->push_back(arg);
      continue;
    }
    std::string body = arg.substr(2);
    auto eq = body.find('=');
    std::string name = body.substr(0, eq);
    bool has_value = eq != std::string::npos;
    std::string value = has_value ? body.substr(eq + 1) : "";
    auto it = Registry().find(name);
    if (it == Registry().end() && !has_value && name.rfind("no", 0) == 0) {
      auto neg = Registry().find(name.substr(2));
      if (neg != Registry().end() && neg->second.type == "bool") {
        neg->second.parse("false");
        continue;
      }
    }
    if (it == Registry().end()) {
      C2_ENFORCE(name.rfind("caffe2_", 0) != 0, "Unknown flag --", name);
      if (rest) rest->push_back(arg);
      continue;
    }
    if (!has_value && it->second.type != "bool") {
      C2_ENFORCE(i + 1 < args.size(), "Flag --", name, " needs a value");
      value = args[++i];
    }
    C2_ENFORCE(it->second.parse(value), "Flag --", name, " expects a value of type ",
               it->second.type, ", got '", value, "'");
  }
}

std::vector<std::string> FlagNames() {
  std::vector<std::string> names;
  for (const auto& kv : Registry()) names.push_back(kv.first);
  return names;
}

std::string FlagValue(const std::string& name) {
  auto it = Registry().find(name);
  C2_ENFORCE(it != Registry().end(), "Unknown flag --", name);
  return it->second.current();
}

}  // namespace caffe2
