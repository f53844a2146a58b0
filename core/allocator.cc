#include "core/allocator.h"

#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>
#include <utility>

#include "core/enforce.h"

namespace caffe2 {
namespace {

constexpr size_t kAlignment = 64;

class CPUAllocator final : public Allocator {
 public:
  void* Allocate(size_t nbytes, int) override {
    if (nbytes == 0) return nullptr;
    size_t rounded = (nbytes + kAlignment - 1) / kAlignment * kAlignment;
    void* ptr = std::aligned_alloc(kAlignment, rounded);
    C2_ENFORCE(ptr != nullptr, "CPU allocation of ", nbytes, " bytes failed");
    return ptr;
  }
  void Free(void* ptr, int) override { std::free(ptr); }
};

void CopyCPUToCPU(size_t nbytes, const void* src, Device, void* dst, Device) {
  if (nbytes > 0) std::memcpy(dst, src, nbytes);
}

struct Tables {
  std::mutex mutex;
  std::map<int, Allocator*> allocators;
  std::map<std::pair<int, int>, CopyBytesFn> copies;
};

Tables& GetTables() {
  static auto* tables = [] {
    auto* t = new Tables();
    static CPUAllocator cpu;
    t->allocators[kCPU] = &cpu;
    t->copies[{kCPU, kCPU}] = &CopyCPUToCPU;
    return t;
  }();
  return *tables;
}

}  // namespace

Allocator* GetAllocator(int device_type) {
  auto& t = GetTables();
  std::lock_guard<std::mutex> lock(t.mutex);
  auto it = t.allocators.find(device_type);
  C2_ENFORCE(it != t.allocators.end(), "No allocator for device type ", DeviceTypeName(device_type),
             ": this build does not include that backend");
  return it->second;
}

void SetAllocator(int device_type, Allocator* allocator) {
  auto& t = GetTables();
  std::lock_guard<std::mutex> lock(t.mutex);
  t.allocators[device_type] = allocator;
}

void RegisterCopyBytes(int src_type, int dst_type, CopyBytesFn fn) {
  auto& t = GetTables();
  std::lock_guard<std::mutex> lock(t.mutex);
  t.copies[{src_type, dst_type}] = fn;
}

void CopyBytes(size_t nbytes, const void* src, Device src_device, void* dst, Device dst_device) {
  CopyBytesFn fn = nullptr;
  {
    auto& t = GetTables();
    std::lock_guard<std::mutex> lock(t.mutex);
    auto it = t.copies.find({src_device.type, dst_device.type});
    C2_ENFORCE(it != t.copies.end(), "No copy routine from ", DeviceString(src_device), " to ",
               DeviceString(dst_device), ": this build does not include that backend");
    fn = it->second;
  }
  fn(nbytes, src, src_device, dst, dst_device);
}

}  // namespace caffe2
