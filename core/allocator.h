// Memory allocation and byte copies per device type. The CPU entries are built in; the CUDA backend
// registers its caching allocator and copy routines when its library loads.
#pragma once

#include <cstddef>

#include "core/device.h"

namespace caffe2 {

class Allocator {
 public:
  virtual ~Allocator() = default;
  virtual void* Allocate(size_t nbytes, int device_id) = 0;
  virtual void Free(void* ptr, int device_id) = 0;
};

// Throws when no allocator is registered for the device type ("not built with CUDA").
Allocator* GetAllocator(int device_type);
void SetAllocator(int device_type, Allocator* allocator);

using CopyBytesFn = void (*)(size_t nbytes, const void* src, Device src_device, void* dst,
                             Device dst_device);
// Registers the copy routine used between two device types.
void RegisterCopyBytes(int src_type, int dst_type, CopyBytesFn fn);
// Copies nbytes between devices; synchronous from the caller's view. Throws when no route exists.
void CopyBytes(size_t nbytes, const void* src, Device src_device, void* dst, Device dst_device);

}  // namespace caffe2
