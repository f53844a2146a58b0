// DnnlBlockedTensor: a float activation kept in the memory layout oneDNN picked (nChw16c and the
// like), with its logical NCHW dims, so that a chain of convolutions passes it on without
// reordering to and from NCHW around every one (the KeepDnnlBlockedLayout transform,
// caffe2.python.net_transforms). A blob holding one is not a Tensor: only the ops of this folder
// read it, and DnnlToPlain turns it back into one.
#pragma once

#include <oneapi/dnnl/dnnl.hpp>

#include <cstdint>
#include <memory>
#include <vector>

namespace caffe2 {

struct DnnlBlockedTensor {
  std::vector<int64_t> dims;  // logical (N, C, H, W)
  dnnl::memory::desc desc;    // the layout of data
  std::shared_ptr<float> data;
  size_t capacity = 0;  // bytes of data

  // Makes desc the layout (and dims its dims), reusing the buffer when it is large enough.
  void Reset(const dnnl::memory::desc& layout);
  dnnl::memory Memory() const;
};

}  // namespace caffe2
