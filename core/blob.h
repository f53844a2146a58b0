// Blob: a named slot in a Workspace holding one object of any C++ type (a Tensor, a std::string,
// a DB reader, a mutex...). Get<T>() checks the type; GetMutable<T>() replaces the content with a
// default-constructed T when it holds something else.
#pragma once

#include <memory>
#include <string>
#include <typeindex>
#include <typeinfo>

#include "core/enforce.h"
#include "core/tensor.h"

namespace caffe2 {

// Readable C++ type name, e.g. "caffe2::Tensor".
std::string DemangledTypeName(const std::type_info& type);

class Blob {
 public:
  Blob() = default;
  Blob(const Blob&) = delete;
  Blob& operator=(const Blob&) = delete;
  ~Blob() { Reset(); }

  bool IsEmpty() const { return ptr_ == nullptr; }
  template <class T>
  bool IsType() const {
    return ptr_ != nullptr && *type_ == typeid(T);
  }
  const std::type_info* type() const { return ptr_ ? type_ : nullptr; }
  // "nullptr (uninitialized)" for an empty blob.
  std::string TypeName() const;

  template <class T>
  const T& Get() const {
    C2_ENFORCE(IsType<T>(), "wrong type for the Blob instance. Blob contains ", TypeName(),
               " while caller expects ", DemangledTypeName(typeid(T)));
    return *static_cast<const T*>(ptr_);
  }

  template <class T>
  T* GetMutable() {
    if (!IsType<T>()) Reset(new T());
    return static_cast<T*>(ptr_);
  }

  // Takes ownership of ptr.
  template <class T>
  T* Reset(T* ptr) {
    Reset();
    ptr_ = ptr;
    type_ = &typeid(T);
    destroy_ = [](void* p) { delete static_cast<T*>(p); };
    return ptr;
  }
  template <class T>
  T* Reset(std::unique_ptr<T> ptr) {
    return Reset(ptr.release());
  }
  // Points at an object owned elsewhere.
  template <class T>
  T* ShareExternal(T* ptr) {
    Reset();
    ptr_ = ptr;
    type_ = &typeid(T);
    destroy_ = nullptr;
    return ptr;
  }
  void Reset();

  // The blob's tensor on `device`, replacing the content when it is not a tensor of that device
  // type (a tensor on another device id of the same type is moved to the new id).
  Tensor* GetMutableTensor(Device device);
  bool IsTensor() const { return IsType<Tensor>(); }

 private:
  void* ptr_ = nullptr;
  const std::type_info* type_ = nullptr;
  void (*destroy_)(void*) = nullptr;
};

}  // namespace caffe2
