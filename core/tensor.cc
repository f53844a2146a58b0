#include "core/tensor.h"

#include <cstddef>
#include <sstream>

#include "core/allocator.h"
#include "core/flags.h"

C2_DEFINE_bool(caffe2_keep_on_shrink, true, "Keep a tensor's memory when it is resized smaller.");
C2_DEFINE_int64(caffe2_max_keep_on_shrink_memory, INT64_MAX,
                "Most bytes of slack kept when a tensor shrinks.");

namespace caffe2 {

void Tensor::SetDevice(Device device) {
  if (device == device_) return;
  data_.reset();
  capacity_ = 0;
  device_ = device;
}

int64_t Tensor::dim(int i) const {
  int n = ndim();
  int k = i < 0 ? i + n : i;
  C2_ENFORCE(k >= 0 && k < n, "Dimension ", i, " out of range for a ", n, "-d tensor");
  return dims_[k];
}

int64_t Tensor::size_to_dim(int k) const {
  C2_ENFORCE(k >= 0 && k <= ndim(), "size_to_dim(", k, ") out of range for a ", ndim(),
             "-d tensor");
  int64_t r = 1;
  for (int i = 0; i < k; ++i) r *= dims_[i];
  return r;
}

int64_t Tensor::size_from_dim(int k) const {
  C2_ENFORCE(k >= 0 && k <= ndim(), "size_from_dim(", k, ") out of range for a ", ndim(),
             "-d tensor");
  int64_t r = 1;
  for (int i = k; i < ndim(); ++i) r *= dims_[i];
  return r;
}

int64_t CheckedNumel(const std::vector<int64_t>& dims) {
  // The product of the nonzero dims must fit, so that every partial product (size_to_dim, ...)
  // does, even in an empty tensor.
  int64_t nonzero = 1;
  bool overflow = false, empty = false;
  for (int64_t d : dims) {
    C2_ENFORCE(d >= 0, "Negative dimension in ", Tensor::DimsString(dims));
    if (d == 0) {
      empty = true;
    } else {
      overflow = overflow || __builtin_mul_overflow(nonzero, d, &nonzero);
    }
  }
  C2_ENFORCE(!overflow, "The tensor dims ", Tensor::DimsString(dims),
             " hold more than 2^63 - 1 elements");
  return empty ? 0 : nonzero;
}

size_t CheckedBytes(const std::vector<int64_t>& dims, int64_t numel, const TypeMeta& meta) {
  int64_t bytes = 0;
  const bool overflow = __builtin_mul_overflow(numel, static_cast<int64_t>(meta.itemsize), &bytes);
  C2_ENFORCE(!overflow && bytes <= PTRDIFF_MAX, "A ", meta.name, " tensor of dims ",
             Tensor::DimsString(dims), " (", numel, " elements of ", meta.itemsize,
             " bytes) is larger than one allocation can address");
  return static_cast<size_t>(bytes);
}

void Tensor::Resize(const std::vector<int64_t>& dims) {
  const int64_t n = CheckedNumel(dims);
  dims_ = dims;
  size_ = n;
  if (!data_) return;
  size_t needed = CheckedBytes(dims_, n, meta_);
  bool too_small = needed > capacity_;
  bool drop_slack = !FLAGS_caffe2_keep_on_shrink ||
                    static_cast<int64_t>(capacity_ - std::min(capacity_, needed)) >
                        FLAGS_caffe2_max_keep_on_shrink_memory;
  if (too_small || drop_slack) FreeMemory();
}

void Tensor::Reshape(std::vector<int64_t> dims) {
  C2_ENFORCE(initialized(), "Cannot reshape an uninitialized tensor");
  int infer = -1;
  int64_t known = 1;
  for (size_t i = 0; i < dims.size(); ++i) {
    if (dims[i] == -1) {
      C2_ENFORCE(infer < 0, "Reshape ", DimsString(dims), ": at most one dimension may be -1");
      infer = static_cast<int>(i);
    } else {
      C2_ENFORCE(dims[i] >= 0, "Reshape ", DimsString(dims), ": negative dimension");
      C2_ENFORCE(!__builtin_mul_overflow(known, dims[i], &known), "Reshape ", DimsString(dims),
                 " holds more than 2^63 - 1 elements");
    }
  }
  if (infer >= 0) {
    C2_ENFORCE(known > 0 && size_ % known == 0, "Reshape ", DimsString(dims), " cannot hold ",
               size_, " elements");
    dims[infer] = size_ / known;
    known *= dims[infer];
  }
  C2_ENFORCE(known == size_, "Reshape from ", DimsString(dims_), " to ", DimsString(dims),
             " changes the element count (", size_, " vs ", known, ")");
  dims_ = std::move(dims);
}

void Tensor::FreeMemory() {
  data_.reset();
  capacity_ = 0;
}

void Tensor::ShareData(const Tensor& other) {
  C2_ENFORCE(other.initialized(), "ShareData from an uninitialized tensor");
  device_ = other.device_;
  dims_ = other.dims_;
  size_ = other.size_;
  meta_ = other.meta_;
  data_ = other.data_;
  capacity_ = other.capacity_;
}

void Tensor::ShareExternalPointer(void* ptr, const TypeMeta& meta, size_t capacity_bytes) {
  C2_ENFORCE(size_ >= 0, "Resize the tensor before sharing an external pointer");
  meta_ = meta;
  data_ = std::shared_ptr<void>(ptr, [](void*) {});
  capacity_ = capacity_bytes ? capacity_bytes : nbytes();
}

void Tensor::CopyFrom(const Tensor& other) {
  if (&other == this) return;
  C2_ENFORCE(other.initialized(), "CopyFrom an uninitialized tensor");
  Resize(other.dims_);
  if (!other.meta_.initialized()) return;
  void* dst = raw_mutable_data(other.meta_);
  if (numel() == 0) return;
  if (meta_.copy != nullptr) {
    C2_ENFORCE(device_.type == kCPU && other.device_.type == kCPU, "Tensors of ", meta_.name,
               " can only be copied on the CPU");
    meta_.copy(other.raw_data(), dst, static_cast<size_t>(numel()));
  } else {
    CopyBytes(nbytes(), other.raw_data(), other.device_, dst, device_);
  }
}

const void* Tensor::raw_data() const {
  C2_ENFORCE(data_ || numel() == 0, "The tensor ", DebugString(),
             " has no data yet: it was resized but never written");
  return data_.get();
}

void* Tensor::raw_mutable_data(const TypeMeta& meta) {
  C2_ENFORCE(size_ >= 0, "Tensor::mutable_data called before Resize");
  C2_ENFORCE(meta.initialized(), "Tensor::mutable_data with an uninitialized element type");
  size_t needed = CheckedBytes(dims_, size_, meta);
  if (meta_ == meta && data_ && needed <= capacity_) return data_.get();
  if (meta_ == meta && !data_ && needed == 0) return nullptr;
  FreeMemory();
  meta_ = meta;
  if (needed == 0) return nullptr;
  Allocator* allocator = GetAllocator(device_.type);
  int device_id = device_.id;
  void* ptr = allocator->Allocate(needed, device_id);
  size_t count = static_cast<size_t>(size_);
  if (meta.construct) meta.construct(ptr, count);
  auto destroy = meta.destroy;
  data_ = std::shared_ptr<void>(ptr, [allocator, device_id, destroy, count](void* p) {
    if (destroy) destroy(p, count);
    allocator->Free(p, device_id);
  });
  capacity_ = needed;
  return ptr;
}

void Tensor::CheckType(const TypeMeta& expected) const {
  C2_ENFORCE(meta_ == expected, "Tensor holds ", meta_.name, " while the caller expects ",
             expected.name);
}

std::string Tensor::DimsString(const std::vector<int64_t>& dims) {
  std::ostringstream os;
  os << "(";
  for (size_t i = 0; i < dims.size(); ++i) os << (i ? ", " : "") << dims[i];
  os << (dims.size() == 1 ? ",)" : ")");
  return os.str();
}

std::string Tensor::DebugString() const {
  return MakeString(meta_.name, " tensor ", initialized() ? DimsString(dims_) : "(uninitialized)",
                    " on ", DeviceString(device_));
}

}  // namespace caffe2
