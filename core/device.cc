#include "core/device.h"

#include "core/enforce.h"

namespace caffe2 {

std::string DeviceTypeName(int type) {
  switch (type) {
    case kCPU:
      return "CPU";
    case kCUDA:
      return "CUDA";
    case kMKLDNN:
      return "MKLDNN";
    case kOPENGL:
      return "OPENGL";
    default:
      return MakeString("DEVICE_", type);
  }
}

std::string DeviceString(const Device& d) {
  return d.type == kCPU ? "CPU" : MakeString(DeviceTypeName(d.type), ":", d.id);
}

}  // namespace caffe2
