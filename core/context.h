// Per-operator device state. CPUContext owns the random generator, seeded from
// DeviceOption.random_seed when present and from a random source otherwise.
#pragma once

#include <cstdint>
#include <memory>
#include <random>

#include "caffe2/proto/caffe2.pb.h"
#include "core/device.h"

namespace caffe2 {

// A fresh seed from the random device; the seed used when a DeviceOption has none.
uint32_t RandomNumberSeed();
// The device a DeviceOption names (CUDA id from cuda_gpu_id).
Device DeviceFromOption(const DeviceOption& option);

class CPUContext {
 public:
  CPUContext() : CPUContext(DeviceOption()) {}
  explicit CPUContext(const DeviceOption& option)
      : seed_(option.has_random_seed() ? option.random_seed() : RandomNumberSeed()) {}

  void SwitchToDevice(int /*stream_id*/ = 0) {}
  void FinishDeviceComputation() {}
  Device device() const { return Device{kCPU, 0}; }
  std::mt19937& RandGenerator() {
    if (!generator_) generator_ = std::make_unique<std::mt19937>(seed_);
    return *generator_;
  }
  uint32_t seed() const { return seed_; }

 private:
  uint32_t seed_;
  std::unique_ptr<std::mt19937> generator_;
};

}  // namespace caffe2
