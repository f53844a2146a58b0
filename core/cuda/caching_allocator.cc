#include "core/cuda/caching_allocator.h"

#include <cuda_runtime.h>

#include "core/cuda/cuda_check.h"
#include "core/cuda/cuda_context.h"
#include "core/device_sync.h"

namespace caffe2 {
namespace {

thread_local bool freed_pending_blocks = false;  // this thread holds pending blocks

}  // namespace

size_t CudaCachingAllocator::BinSize(size_t nbytes) {
  constexpr size_t kSmall = 512;
  constexpr size_t kLarge = size_t{1} << 20;
  if (nbytes <= kLarge) return (nbytes + kSmall - 1) / kSmall * kSmall;
  size_t bin = kLarge;
  while (bin < nbytes) bin <<= 1;
  return bin;
}

void* CudaCachingAllocator::Allocate(size_t nbytes, int device_id) {
  if (nbytes == 0) return nullptr;
  static const int device_count = NumCudaDevices();
  C2_ENFORCE(device_count > 0, "Cannot allocate ", nbytes, " bytes on GPU ", device_id,
             ": no CUDA device is available");
  C2_ENFORCE(device_id >= 0 && device_id < device_count, "Cannot allocate on GPU ", device_id,
             ": only ", device_count, " CUDA devices are visible");
  const size_t size = BinSize(nbytes);
  std::lock_guard<std::mutex> lock(mutex_);
  auto& bins = free_blocks_[device_id];
  const std::thread::id self = std::this_thread::get_id();
  for (auto [it, end] = bins.equal_range(size); it != end; ++it) {
    const std::thread::id owner = it->second.pending_owner;
    if (owner != std::thread::id() && owner != self) continue;  // in use by another stream
    void* ptr = it->second.ptr;
    bins.erase(it);
    stats_.cached_bytes -= size;
    stats_.allocated_bytes += size;
    ++stats_.cache_hits;
    return ptr;
  }
  C2_CUDA_CHECK(cudaSetDevice(device_id));
  void* ptr = nullptr;
  cudaError_t status = cudaMalloc(&ptr, size);
  if (status == cudaErrorMemoryAllocation) {
    cudaGetLastError();
    ReleaseCached(device_id);
    status = cudaMalloc(&ptr, size);
  }
  C2_ENFORCE(status == cudaSuccess, "cudaMalloc of ", size, " bytes on GPU ", device_id,
             " failed: ", cudaGetErrorString(status));
  ++stats_.cuda_malloc_calls;
  block_sizes_[ptr] = size;
  stats_.allocated_bytes += size;
  return ptr;
}

void CudaCachingAllocator::Free(void* ptr, int device_id) {
  if (!ptr) return;
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = block_sizes_.find(ptr);
  if (it == block_sizes_.end()) return;  // not ours: nothing to do
  const bool pending = DeferDeviceSync::Active();
  freed_pending_blocks |= pending;
  const std::thread::id owner = pending ? std::this_thread::get_id() : std::thread::id();
  free_blocks_[device_id].emplace(it->second, FreeBlock{ptr, owner});
  stats_.allocated_bytes -= it->second;
  stats_.cached_bytes += it->second;
}

void CudaCachingAllocator::ReleaseCached(int device_id) {
  auto& bins = free_blocks_[device_id];
  for (auto it = bins.begin(); it != bins.end();) {
    if (it->second.pending_owner != std::thread::id()) {
      ++it;  // its thread's queued work may still use it
      continue;
    }
    cudaFree(it->second.ptr);
    block_sizes_.erase(it->second.ptr);
    stats_.cached_bytes -= it->first;
    it = bins.erase(it);
  }
}

void CudaCachingAllocator::ReleaseThreadPendingBlocks() {
  if (!freed_pending_blocks) return;
  freed_pending_blocks = false;
  const std::thread::id self = std::this_thread::get_id();
  std::lock_guard<std::mutex> lock(mutex_);
  for (auto& [device, bins] : free_blocks_) {
    for (auto& [size, block] : bins) {
      if (block.pending_owner == self) block.pending_owner = std::thread::id();
    }
  }
}

void CudaCachingAllocator::EmptyCache() {
  std::lock_guard<std::mutex> lock(mutex_);
  for (auto& kv : free_blocks_) ReleaseCached(kv.first);
}

CudaCachingAllocator::Stats CudaCachingAllocator::stats() {
  std::lock_guard<std::mutex> lock(mutex_);
  return stats_;
}

CudaCachingAllocator& GetCudaCachingAllocator() {
  static auto* allocator = new CudaCachingAllocator();  // outlives every tensor
  return *allocator;
}

}  // namespace caffe2
