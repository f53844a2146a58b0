// Whether this build runs CPU kernels with oneDNN (CMake option C2_USE_DNNL with libdnnl found).
// dnnl_context.cc defines it when oneDNN is built in, no_dnnl.cc otherwise. Kernels never test it:
// their oneDNN entry points simply report "not handled" in a build without oneDNN.
#pragma once

namespace caffe2 {

bool DnnlEnabled();

}  // namespace caffe2
