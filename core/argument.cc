#include "core/argument.h"

#include <cstdint>
#include <limits>
#include <string>

#include "core/enforce.h"

namespace caffe2 {

namespace {

const char* kExpectF = "f (a float)";
const char* kExpectI = "i (an integer or bool)";
const char* kExpectS = "s (a string)";
const char* kExpectN = "n (a NetDef)";

[[noreturn]] void WrongField(const std::string& name, const char* expected) {
  C2_THROW("Argument '", name, "' does not have the right field: expected field ", expected);
}

// The fields an argument holds, for errors: "s (a string) 'abc'".
std::string HeldFields(const Argument& a) {
  std::string out;
  auto add = [&](const std::string& what) { out += (out.empty() ? "" : ", ") + what; };
  if (a.has_f()) add("f " + std::to_string(a.f()));
  if (a.has_i()) add("i " + std::to_string(a.i()));
  if (a.has_s()) add("s '" + a.s().substr(0, 64) + "'");
  if (a.has_n()) add("n (a NetDef)");
  if (a.floats_size()) add("floats");
  if (a.ints_size()) add("ints");
  if (a.strings_size()) add("strings");
  if (a.nets_size()) add("nets");
  return out.empty() ? "nothing (an empty list)" : out;
}

// A list argument read as one kind of list: an argument that holds a value of another field (a
// scalar, a string, another kind of list) is an error rather than an empty list. An empty list sets
// no field, and is fine.
void CheckRepeated(const Argument& a, int expected_size, const char* expected) {
  if (expected_size > 0) return;
  const bool other = a.has_f() || a.has_i() || a.has_s() || a.has_n() || a.floats_size() ||
                     a.ints_size() || a.strings_size() || a.nets_size();
  if (other) {
    C2_THROW("Argument '", a.name(), "' does not have the right field: expected the list field ",
             expected, ", got ", HeldFields(a));
  }
}

template <class T>
T CheckedInt(const std::string& name, int64_t v) {
  if constexpr (std::is_same_v<T, bool>) {
    return v != 0;
  } else {
    C2_ENFORCE(v >= static_cast<int64_t>(std::numeric_limits<T>::min()) &&
                   (v < 0 || static_cast<uint64_t>(v) <=
                                 static_cast<uint64_t>(std::numeric_limits<T>::max())),
               "Argument '", name, "' value ", v, " does not fit the expected integer type");
    return static_cast<T>(v);
  }
}

}  // namespace

ArgumentHelper::ArgumentHelper(const OperatorDef& def) { Index(def.arg()); }
ArgumentHelper::ArgumentHelper(const NetDef& def) { Index(def.arg()); }

void ArgumentHelper::Index(const google::protobuf::RepeatedPtrField<Argument>& args) {
  for (const Argument& arg : args) {
    auto it = args_.find(arg.name());
    if (it != args_.end()) {
      C2_ENFORCE(it->second->SerializeAsString() == arg.SerializeAsString(), "Argument '",
                 arg.name(), "' is given twice with different values");
      continue;
    }
    args_[arg.name()] = &arg;
  }
}

const Argument* ArgumentHelper::Find(const std::string& name) const {
  auto it = args_.find(name);
  return it == args_.end() ? nullptr : it->second;
}

#define C2_FLOAT_ARG(T)                                                                     \
  template <>                                                                               \
  T ArgumentHelper::GetSingleArgument<T>(const std::string& name, const T& dflt) const {    \
    const Argument* a = Find(name);                                                         \
    if (!a) return dflt;                                                                    \
    if (!a->has_f()) WrongField(name, kExpectF);                                            \
    return static_cast<T>(a->f());                                                          \
  }                                                                                         \
  template <>                                                                               \
  bool ArgumentHelper::HasSingleArgumentOfType<T>(const std::string& name) const {          \
    const Argument* a = Find(name);                                                         \
    return a && a->has_f();                                                                 \
  }                                                                                         \
  template <>                                                                               \
  std::vector<T> ArgumentHelper::GetRepeatedArgument<T>(const std::string& name,            \
                                                        const std::vector<T>& dflt) const { \
    const Argument* a = Find(name);                                                         \
    if (!a) return dflt;                                                                    \
    if (a->floats_size() == 0 && a->ints_size() > 0) {                                      \
      return std::vector<T>(a->ints().begin(), a->ints().end()); /* [1, 2] for floats */    \
    }                                                                                       \
    CheckRepeated(*a, a->floats_size(), "floats");                                          \
    return std::vector<T>(a->floats().begin(), a->floats().end());                          \
  }
C2_FLOAT_ARG(float)
C2_FLOAT_ARG(double)
#undef C2_FLOAT_ARG

#define C2_INT_ARG(T)                                                                       \
  template <>                                                                               \
  T ArgumentHelper::GetSingleArgument<T>(const std::string& name, const T& dflt) const {    \
    const Argument* a = Find(name);                                                         \
    if (!a) return dflt;                                                                    \
    if (!a->has_i()) WrongField(name, kExpectI);                                            \
    return CheckedInt<T>(name, a->i());                                                     \
  }                                                                                         \
  template <>                                                                               \
  bool ArgumentHelper::HasSingleArgumentOfType<T>(const std::string& name) const {          \
    const Argument* a = Find(name);                                                         \
    return a && a->has_i();                                                                 \
  }                                                                                         \
  template <>                                                                               \
  std::vector<T> ArgumentHelper::GetRepeatedArgument<T>(const std::string& name,            \
                                                        const std::vector<T>& dflt) const { \
    const Argument* a = Find(name);                                                         \
    if (!a) return dflt;                                                                    \
    CheckRepeated(*a, a->ints_size(), "ints");                                              \
    std::vector<T> out;                                                                     \
    for (int64_t v : a->ints()) out.push_back(CheckedInt<T>(name, v));                      \
    return out;                                                                             \
  }
C2_INT_ARG(bool)
C2_INT_ARG(int8_t)
C2_INT_ARG(int16_t)
C2_INT_ARG(int32_t)
C2_INT_ARG(int64_t)
C2_INT_ARG(uint8_t)
C2_INT_ARG(uint16_t)
C2_INT_ARG(size_t)
#undef C2_INT_ARG

template <>
std::string ArgumentHelper::GetSingleArgument<std::string>(const std::string& name,
                                                           const std::string& dflt) const {
  const Argument* a = Find(name);
  if (!a) return dflt;
  if (!a->has_s()) WrongField(name, kExpectS);
  return a->s();
}
template <>
bool ArgumentHelper::HasSingleArgumentOfType<std::string>(const std::string& name) const {
  const Argument* a = Find(name);
  return a && a->has_s();
}
template <>
std::vector<std::string> ArgumentHelper::GetRepeatedArgument<std::string>(
    const std::string& name, const std::vector<std::string>& dflt) const {
  const Argument* a = Find(name);
  if (!a) return dflt;
  CheckRepeated(*a, a->strings_size(), "strings");
  return std::vector<std::string>(a->strings().begin(), a->strings().end());
}

template <>
NetDef ArgumentHelper::GetSingleArgument<NetDef>(const std::string& name,
                                                 const NetDef& dflt) const {
  const Argument* a = Find(name);
  if (!a) return dflt;
  if (!a->has_n()) WrongField(name, kExpectN);
  return a->n();
}
template <>
bool ArgumentHelper::HasSingleArgumentOfType<NetDef>(const std::string& name) const {
  const Argument* a = Find(name);
  return a && a->has_n();
}
template <>
std::vector<NetDef> ArgumentHelper::GetRepeatedArgument<NetDef>(
    const std::string& name, const std::vector<NetDef>& dflt) const {
  const Argument* a = Find(name);
  if (!a) return dflt;
  CheckRepeated(*a, a->nets_size(), "nets");
  return std::vector<NetDef>(a->nets().begin(), a->nets().end());
}

template <>
Argument MakeArgument(const std::string& name, const float& value) {
  Argument a;
  a.set_name(name);
  a.set_f(value);
  return a;
}
template <>
Argument MakeArgument(const std::string& name, const int64_t& value) {
  Argument a;
  a.set_name(name);
  a.set_i(value);
  return a;
}
template <>
Argument MakeArgument(const std::string& name, const int& value) {
  return MakeArgument<int64_t>(name, value);
}
template <>
Argument MakeArgument(const std::string& name, const bool& value) {
  return MakeArgument<int64_t>(name, value ? 1 : 0);
}
template <>
Argument MakeArgument(const std::string& name, const std::string& value) {
  Argument a;
  a.set_name(name);
  a.set_s(value);
  return a;
}
template <>
Argument MakeArgument(const std::string& name, const std::vector<int64_t>& value) {
  Argument a;
  a.set_name(name);
  for (int64_t v : value) a.add_ints(v);
  return a;
}
template <>
Argument MakeArgument(const std::string& name, const std::vector<float>& value) {
  Argument a;
  a.set_name(name);
  for (float v : value) a.add_floats(v);
  return a;
}
template <>
Argument MakeArgument(const std::string& name, const std::vector<std::string>& value) {
  Argument a;
  a.set_name(name);
  for (const auto& v : value) a.add_strings(v);
  return a;
}

}  // namespace caffe2
