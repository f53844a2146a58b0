#include "core/blob.h"

#include <cxxabi.h>

#include <cstdlib>

namespace caffe2 {

std::string DemangledTypeName(const std::type_info& type) {
  int status = 0;
  char* name = abi::__cxa_demangle(type.name(), nullptr, nullptr, &status);
  std::string result = (status == 0 && name) ? name : type.name();
  std::free(name);
  return result;
}

std::string Blob::TypeName() const {
  return ptr_ ? DemangledTypeName(*type_) : "nullptr (uninitialized)";
}

void Blob::Reset() {
  if (ptr_ && destroy_) destroy_(ptr_);
  ptr_ = nullptr;
  type_ = nullptr;
  destroy_ = nullptr;
}

Tensor* Blob::GetMutableTensor(Device device) {
  if (IsType<Tensor>()) {
    auto* t = static_cast<Tensor*>(ptr_);
    if (t->device().type == device.type) {
      t->SetDevice(device);
      return t;
    }
  }
  return Reset(new Tensor(device));
}

}  // namespace caffe2
