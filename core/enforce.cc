#include "core/enforce.h"

#include "core/logging.h"

namespace caffe2 {

void ThrowEnforce(const char* file, int line, const char* cond, const std::string& msg) {
  std::string full = msg.empty() && cond ? MakeString("Enforce failed: ", cond) : msg;
  if (VerboseErrorsEnabled()) {
    full += MakeString(" (", file, ":", line, cond ? MakeString(", ", cond) : "", ")");
  }
  throw EnforceNotMet(full);
}

}  // namespace caffe2
