// Typed access to the arguments of an OperatorDef or NetDef (spec §5.3).
//
// Typing is strict: float and double read field `f`; bool and integer types read field `i` (the
// value must fit the type); std::string reads `s`; NetDef reads `n`. Repeated arguments read
// `floats`, `ints`, `strings`, `nets`. A present argument with the wrong field is an error naming
// the argument and the field expected.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "caffe2/proto/caffe2.pb.h"

namespace caffe2 {

class ArgumentHelper {
 public:
  explicit ArgumentHelper(const OperatorDef& def);
  explicit ArgumentHelper(const NetDef& def);

  bool HasArgument(const std::string& name) const { return args_.count(name) > 0; }
  template <class T>
  T GetSingleArgument(const std::string& name, const T& default_value) const;
  template <class T>
  bool HasSingleArgumentOfType(const std::string& name) const;
  template <class T>
  std::vector<T> GetRepeatedArgument(const std::string& name,
                                     const std::vector<T>& default_value = {}) const;
  const Argument* Find(const std::string& name) const;

 private:
  void Index(const google::protobuf::RepeatedPtrField<Argument>& args);
  std::map<std::string, const Argument*> args_;
};

// Builds an Argument (used by gradient makers and tests).
template <class T>
Argument MakeArgument(const std::string& name, const T& value);

}  // namespace caffe2
