// NcclError: a multi-process NCCL collective or communicator setup failed or timed out (a peer
// died or is stuck, the network broke). It is a CollectiveIoError (distributed/collective.h), so
// Python sees it as gloo.python.IoError (a RuntimeError), as it sees a failed Gloo collective.
#pragma once

#include "distributed/collective.h"

namespace caffe2 {

class NcclError : public CollectiveIoError {
 public:
  using CollectiveIoError::CollectiveIoError;
};

}  // namespace caffe2
