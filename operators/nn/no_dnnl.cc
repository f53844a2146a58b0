// Built when oneDNN is absent (CMake chooses this file instead of the *_dnnl.cc kernels): every
// oneDNN entry point reports "not handled" and the kernels run their own paths.
#include "operators/nn/conv_op_dnnl.h"

namespace caffe2 {

bool DnnlConvForward(const ConvPoolGeometry&, int64_t, int, const float*, const float*, const float*, float*) {
  return false;
}

bool DnnlConvBackward(const ConvPoolGeometry&, int64_t, int, const float*, const float*, const float*, float*,
                      float*, float*) {
  return false;
}

}  // namespace caffe2
