// Small builders shared by the core tests.
#pragma once

#include <string>
#include <vector>

#include "core/argument.h"
#include "core/enforce.h"
#include "core/gradient.h"

namespace caffe2 {
namespace testing {

inline OperatorDef Op(const std::string& type, const std::vector<std::string>& inputs,
                      const std::vector<std::string>& outputs,
                      const std::vector<Argument>& args = {}) {
  return CreateOperatorDef(type, "", inputs, outputs, args);
}

inline OperatorDef Fill(const std::string& out, std::vector<int64_t> shape, float value) {
  return Op("ConstantFill", {}, {out},
            {MakeArgument("shape", shape), MakeArgument("value", value)});
}

}  // namespace testing
}  // namespace caffe2
