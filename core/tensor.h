// Tensor: an n-dimensional array of one element type on one device.
//
// - Dims are int64; numel() is their product (1 for a 0-d tensor). A tensor that was never resized
//   is "uninitialized" (initialized() == false); fetching it is an error.
// - Sizes are checked, never wrapped: a negative dim, an element count past int64 or a byte count
//   past what one allocation can address is an error naming the dims (CheckedNumel, CheckedBytes).
// - Allocation is lazy: Resize only records dims; mutable_data<T>() allocates on first use or when
//   the element type changes. Capacity is kept when a tensor shrinks (--caffe2_keep_on_shrink),
//   up to --caffe2_max_keep_on_shrink_memory bytes of slack.
// - ShareData makes two tensors alias one storage; CopyFrom deep-copies, across devices too.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "core/device.h"
#include "core/enforce.h"
#include "core/types.h"

namespace caffe2 {

// The element count of `dims`; a negative dim or a product past INT64_MAX is an error naming them.
int64_t CheckedNumel(const std::vector<int64_t>& dims);
// numel * itemsize; more than PTRDIFF_MAX bytes (what one allocation can address) is an error
// naming the dims and the element type.
size_t CheckedBytes(const std::vector<int64_t>& dims, int64_t numel, const TypeMeta& meta);

class Tensor {
 public:
  explicit Tensor(Device device = Device{}) : device_(device) {}
  Tensor(const std::vector<int64_t>& dims, Device device) : device_(device) { Resize(dims); }
  Tensor(const Tensor&) = delete;
  Tensor& operator=(const Tensor&) = delete;

  const Device& device() const { return device_; }
  // Moves an (unallocated or freed) tensor to another device; drops current storage.
  void SetDevice(Device device);

  const std::vector<int64_t>& dims() const { return dims_; }
  int ndim() const { return static_cast<int>(dims_.size()); }
  // Dimension i; negative i counts from the end.
  int64_t dim(int i) const;
  int64_t numel() const { return size_ < 0 ? 0 : size_; }
  bool initialized() const { return size_ >= 0; }
  const TypeMeta& meta() const { return meta_; }
  DataType dtype() const { return meta_.id; }
  size_t itemsize() const { return meta_.itemsize; }
  size_t nbytes() const { return static_cast<size_t>(numel()) * meta_.itemsize; }
  size_t capacity_nbytes() const { return capacity_; }
  bool has_storage() const { return static_cast<bool>(data_); }
  // Product of dims before / from axis.
  int64_t size_to_dim(int k) const;
  int64_t size_from_dim(int k) const;

  void Resize(const std::vector<int64_t>& dims);
  template <class... Ints>
  void Resize(Ints... dims) {
    Resize(std::vector<int64_t>{static_cast<int64_t>(dims)...});
  }
  void ResizeLike(const Tensor& other) { Resize(other.dims()); }
  // New dims with the same element count (one dim may be -1).
  void Reshape(std::vector<int64_t> dims);
  // Releases the storage; dims are kept.
  void FreeMemory();

  // Aliases other's storage, dims and type (same device type required).
  void ShareData(const Tensor& other);
  // Uses external memory without owning it.
  void ShareExternalPointer(void* ptr, const TypeMeta& meta, size_t capacity_bytes);
  // Deep copy of dims, type and data; works across devices.
  void CopyFrom(const Tensor& other);

  const void* raw_data() const;
  void* raw_mutable_data(const TypeMeta& meta);
  void* raw_mutable_data() { return raw_mutable_data(meta_); }

  template <class T>
  const T* data() const {
    CheckType(TypeMeta::Make<T>());
    return static_cast<const T*>(raw_data());
  }
  template <class T>
  T* mutable_data() {
    return static_cast<T*>(raw_mutable_data(TypeMeta::Make<T>()));
  }
  template <class T>
  bool IsType() const {
    return meta_ == TypeMeta::Make<T>();
  }

  // "float tensor (2, 3) on CPU"
  std::string DebugString() const;
  static std::string DimsString(const std::vector<int64_t>& dims);

 private:
  void CheckType(const TypeMeta& expected) const;

  Device device_;
  std::vector<int64_t> dims_;
  int64_t size_ = -1;
  TypeMeta meta_;
  std::shared_ptr<void> data_;
  size_t capacity_ = 0;  // bytes usable through data_
};

}  // namespace caffe2
