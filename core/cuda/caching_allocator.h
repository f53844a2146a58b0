// A caching allocator for GPU memory: freed blocks are kept per device in size-rounded bins and
// reused by later allocations of the same bin; on an out-of-memory error every cached block of the
// device is released and the allocation retried once. Registered as the CUDA allocator when the
// CUDA library loads.
// A block freed inside a DeferDeviceSync scope (core/device_sync.h) may still be in use by work
// queued on the freeing thread's stream: until that thread's ReleaseThreadPendingBlocks (called
// once the work is done) only the same thread, whose work runs on the same stream in order, may
// reuse it.
#pragma once

#include <cstddef>
#include <map>
#include <mutex>
#include <thread>
#include <unordered_map>
#include <vector>

#include "core/allocator.h"

namespace caffe2 {

class CudaCachingAllocator final : public Allocator {
 public:
  void* Allocate(size_t nbytes, int device_id) override;
  void Free(void* ptr, int device_id) override;
  // Returns every cached block of every device to the driver (not the pending ones).
  void EmptyCache();
  // Makes the blocks the calling thread freed inside its deferred scope reusable by all.
  void ReleaseThreadPendingBlocks();

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
  struct FreeBlock {
    void* ptr;
    std::thread::id pending_owner;  // default id: reusable by every thread
  };
  std::map<int, std::multimap<size_t, FreeBlock>> free_blocks_;  // device -> size -> block
  std::unordered_map<void*, size_t> block_sizes_;
  Stats stats_;
};

CudaCachingAllocator& GetCudaCachingAllocator();

}  // namespace caffe2
