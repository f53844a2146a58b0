#include "core/cuda/caching_allocator.h"

#include <cuda_runtime.h>

#include "core/cuda/cuda_check.h"
#include "core/cuda/cuda_context.h"

namespace caffe2 {

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
  auto it = bins.find(size);
  if (it != bins.end()) {
    void* ptr = it->second;
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
  free_blocks_[device_id].emplace(it->second, ptr);
  stats_.allocated_bytes -= it->second;
  stats_.cached_bytes += it->second;
}

void CudaCachingAllocator::ReleaseCached(int device_id) {
  auto& bins = free_blocks_[device_id];
  for (auto& kv : bins) {
    cudaFree(kv.second);
    block_sizes_.erase(kv.second);
    stats_.cached_bytes -= kv.first;
  }
  bins.clear();
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
