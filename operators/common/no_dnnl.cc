// Built when oneDNN is absent (CMake chooses this file instead of dnnl_context.cc).
#include "operators/common/dnnl.h"

namespace caffe2 {

bool DnnlEnabled() { return false; }

}  // namespace caffe2
