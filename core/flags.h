// Command-line flags (--caffe2_*), set by GlobalInit or by ParseFlags. Each flag is a plain global
// FLAGS_<name> registered with its parser at static-initialisation time.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <type_traits>
#include <vector>

namespace caffe2 {

struct FlagInfo {
  std::string type;  // "int", "int64", "bool", "double", "string"
  std::string help;
  std::function<bool(const std::string&)> parse;  // false on malformed value
  std::function<std::string()> current;
};

// Registers a flag; called by the C2_DEFINE_* macros.
bool RegisterFlag(const std::string& name, FlagInfo info);
// Parses "--name=value", "--name value" and "--name" (bool true) / "--noname" (bool false).
// Unknown --caffe2_* flags and malformed values throw; other arguments are left in `rest`.
void ParseFlags(const std::vector<std::string>& args, std::vector<std::string>* rest);
// Sets one flag by name; throws when unknown or malformed.
void SetFlag(const std::string& name, const std::string& value);
std::vector<std::string> FlagNames();
std::string FlagValue(const std::string& name);

namespace detail {
bool ParseFlagValue(const std::string& s, int* out);
bool ParseFlagValue(const std::string& s, int64_t* out);
bool ParseFlagValue(const std::string& s, bool* out);
bool ParseFlagValue(const std::string& s, double* out);
bool ParseFlagValue(const std::string& s, std::string* out);
template <class T>
bool RegisterTypedFlag(const char* name, const char* type, T* var, const char* help) {
  FlagInfo info;
  info.type = type;
  info.help = help;
  info.parse = [var](const std::string& s) { return ParseFlagValue(s, var); };
  info.current = [var]() {
    if constexpr (std::is_same_v<T, std::string>) {
      return *var;
    } else {
      return std::to_string(*var);
    }
  };
  return RegisterFlag(name, std::move(info));
}
}  // namespace detail

}  // namespace caffe2

#define C2_DEFINE_FLAG_(ctype, tname, name, default_value, help) \
  ctype FLAGS_##name = default_value;                            \
  static const bool c2_flag_registered_##name =                  \
      ::caffe2::detail::RegisterTypedFlag<ctype>(#name, tname, &FLAGS_##name, help)
#define C2_DEFINE_int(name, v, help) C2_DEFINE_FLAG_(int, "int", name, v, help)
#define C2_DEFINE_int64(name, v, help) C2_DEFINE_FLAG_(int64_t, "int64", name, v, help)
#define C2_DEFINE_bool(name, v, help) C2_DEFINE_FLAG_(bool, "bool", name, v, help)
#define C2_DEFINE_double(name, v, help) C2_DEFINE_FLAG_(double, "double", name, v, help)
#define C2_DEFINE_string(name, v, help) C2_DEFINE_FLAG_(std::string, "string", name, v, help)
#define C2_DECLARE_int(name) extern int FLAGS_##name
#define C2_DECLARE_int64(name) extern int64_t FLAGS_##name
#define C2_DECLARE_bool(name) extern bool FLAGS_##name
#define C2_DECLARE_double(name) extern double FLAGS_##name
#define C2_DECLARE_string(name) extern std::string FLAGS_##name
