// Runs a StridedCopyPlan (operators/common/strided_copy.h) on a CUDA stream. Include from CUDA
// operator sources only.
#pragma once

#include <cuda_runtime.h>

#include "operators/common/strided_copy.h"

namespace caffe2 {

// `plan` between device buffers, queued on `stream`: the gather dst[i] = src[source(i)] (src is
// the plan's x), or the scatter dst[source(i)] = src[i] (dst is the plan's x). A contiguous plan
// is one cudaMemcpyAsync, a batched 2-D transpose goes through shared-memory tiles, the rest
// through one thread per word. Nothing for n == 0.
void StridedCopyOnStream(const StridedCopyPlan& plan, const void* src, void* dst, bool scatter,
                         cudaStream_t stream);

// The plan of `ydims` and `xstrides` (elements of itemsize bytes, see MakeStridedCopyPlan) for
// these device buffers, run on `stream`.
void StridedGather(const std::vector<int64_t>& ydims, const std::vector<int64_t>& xstrides,
                   int64_t offset, size_t itemsize, const void* x, void* y, cudaStream_t stream);
void StridedScatter(const std::vector<int64_t>& ydims, const std::vector<int64_t>& xstrides,
                    int64_t offset, size_t itemsize, const void* y, void* x, cudaStream_t stream);

}  // namespace caffe2
