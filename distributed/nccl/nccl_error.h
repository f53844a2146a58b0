// NcclError: a multi-process NCCL collective or communicator setup failed or timed out (a peer
// died or is stuck, the network broke). It is a GlooIoError, so Python sees it as
// gloo.python.IoError (a RuntimeError), the same exception a failed Gloo collective raises.
#pragma once

#include "distributed/gloo/gloo_error.h"

namespace caffe2 {

class NcclError : public GlooIoError {
 public:
  using GlooIoError::GlooIoError;
};

}  // namespace caffe2
