// Scratch memory for CPU kernels (im2col columns, partial sums), shared by all ops of the process.
//
// A ScratchBuffer borrows a float buffer from a process-wide free list for its lifetime and gives
// it back on destruction, so the memory held is bounded by the number of kernels running at once
// rather than by the number of ops in the nets (per-op buffers in a ResNet-50 training net add up
// to more than a gigabyte), and a big buffer is not returned to the OS and faulted in again on
// every call.
#pragma once

#include <cstddef>
#include <memory>
#include <mutex>
#include <vector>

namespace caffe2 {

class ScratchBuffer {
 public:
  // At least n floats; the contents are unspecified.
  explicit ScratchBuffer(size_t n) {
    {
      Pool& pool = GetPool();
      std::lock_guard<std::mutex> lock(pool.mutex);
      // The smallest free buffer that fits, else the largest one (grown below).
      size_t pick = pool.free.size();
      for (size_t i = 0; i < pool.free.size(); ++i) {
        const size_t size = pool.free[i]->size();
        if (pick == pool.free.size()) {
          pick = i;
          continue;
        }
        const size_t best = pool.free[pick]->size();
        const bool fits = size >= n, best_fits = best >= n;
        if ((fits && (!best_fits || size < best)) || (!fits && !best_fits && size > best)) pick = i;
      }
      if (pick < pool.free.size()) {
        buf_ = std::move(pool.free[pick]);
        pool.free.erase(pool.free.begin() + static_cast<std::ptrdiff_t>(pick));
      }
    }
    if (!buf_) buf_ = std::make_unique<std::vector<float>>();
    if (buf_->size() < n) buf_->resize(n);
  }
  ~ScratchBuffer() {
    if (!buf_) return;
    Pool& pool = GetPool();
    std::lock_guard<std::mutex> lock(pool.mutex);
    pool.free.push_back(std::move(buf_));
  }
  ScratchBuffer(ScratchBuffer&&) = default;
  ScratchBuffer(const ScratchBuffer&) = delete;
  ScratchBuffer& operator=(const ScratchBuffer&) = delete;

  float* data() { return buf_->data(); }

 private:
  struct Pool {
    std::mutex mutex;
    std::vector<std::unique_ptr<std::vector<float>>> free;
  };
  // Never destroyed, so kernels running during static destruction still work.
  static Pool& GetPool() {
    static Pool* pool = new Pool;
    return *pool;
  }

  std::unique_ptr<std::vector<float>> buf_;
};

}  // namespace caffe2
