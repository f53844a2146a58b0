// DnnlBlockedTensor (contract in dnnl_blocked_tensor.h).
#include "operators/dnnl/dnnl_blocked_tensor.h"

#include <cstdlib>

#include "core/enforce.h"
#include "operators/common/dnnl_context.h"

namespace caffe2 {

void DnnlBlockedTensor::Reset(const dnnl::memory::desc& layout) {
  const auto logical = layout.dims();
  dims.assign(logical.begin(), logical.end());
  desc = layout;
  const size_t bytes = layout.get_size();
  if (bytes <= capacity && data) return;
  void* p = std::aligned_alloc(64, (bytes + 63) / 64 * 64);
  C2_ENFORCE(p != nullptr, "out of memory for a ", bytes, "-byte oneDNN tensor");
  data = std::shared_ptr<float>(static_cast<float*>(p), [](float* q) { std::free(q); });
  capacity = bytes;
}

dnnl::memory DnnlBlockedTensor::Memory() const {
  return dnnl::memory(desc, DnnlEngine(), data.get());
}

}  // namespace caffe2
