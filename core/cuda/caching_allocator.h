// A caching allocator for GPU memory: freed blocks are kept per device in size-rounded bins and
// reused by later allocations of the same bin; on an out-of-memory error every cached block of the
// device is released and the allocation retried once. Registered as the CUDA allocator when the
// CUDA library loads.
#pragma once

#include <cstddef>
#include <map>
#include <mutex>
#include <unordered_map>
#include <vector>

#include "core/allocator.h"

namespace caffe2 {

class CudaCachingAllocator final : public Allocator {
 public:
  void* Allocate(size_t nbytes, int device_id) override;
  void Free(void* ptr, int device_id) override;
  // Returns every cached block of every device to the driver.
  void EmptyCache();

  struct Stats {
    size_t allocated_bytes = 0;  // handed out and not yet freed
    size_t cached_bytes = 0;     // kept for reuse
    size_t cuda_malloc_calls = 0;
    size_t cache_hits = 0;
  };
  Stats stats();
  // Rounds a request up to its bin (512 bytes, then powers of two above 1 MiB).
  static size_t BinSize(size_t nbytes);

 private:
  void ReleaseCached(int device_id);
  std::mutex mutex_;
  std::map<int, std::multimap<size_t, void*>> free_blocks_;  // device -> size -> block
  std::unordered_map<void*, size_t> block_sizes_;
  Stats stats_;
};

CudaCachingAllocator& GetCudaCachingAllocator();

}  // namespace caffe2
