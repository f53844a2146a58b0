// Free: [X1, ..., Xk] -> [X1, ..., Xk] (enforced one-to-one in place). Releases what each blob
// holds, so its memory returns to the allocator; the blobs stay in the workspace, empty, and the
// next op writing them allocates again. memonger.release_blobs_when_used inserts it after the last
// use of a blob (data_parallel_model's dynamic_memory_management). Device-generic; no gradient.
#pragma once

#include "core/operator.h"

namespace caffe2 {

class FreeOp final : public Operator<CPUContext> {
 public:
  using Operator<CPUContext>::Operator;
  bool RunOnDevice() override {
    for (int i = 0; i < OutputSize(); ++i) OutputBlob(i)->Reset();
    return true;
  }
};

}  // namespace caffe2
