#include "core/context.h"

#include <atomic>
#include <chrono>

namespace caffe2 {

uint32_t RandomNumberSeed() {
  static std::atomic<uint32_t> counter{0};
  static const uint32_t base = [] {
    std::random_device rd;
    return rd() ^ static_cast<uint32_t>(
                      std::chrono::high_resolution_clock::now().time_since_epoch().count());
  }();
  return base + 1000003u * (++counter);
}

Device DeviceFromOption(const DeviceOption& option) {
  Device d;
  d.type = option.device_type();
  d.id = d.type == kCPU ? 0 : option.cuda_gpu_id();
  return d;
}

}  // namespace caffe2
