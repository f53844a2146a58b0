// Where memory lives: a device type (values of caffe2.DeviceType: CPU=0, CUDA=1) and a device id.
#pragma once

#include <string>

namespace caffe2 {

enum DeviceTypeId : int { kCPU = 0, kCUDA = 1, kMKLDNN = 2, kOPENGL = 3 };

struct Device {
  int type = kCPU;
  int id = 0;
  bool operator==(const Device& o) const { return type == o.type && (type == kCPU || id == o.id); }
  bool operator!=(const Device& o) const { return !(*this == o); }
};

// "CPU", "CUDA", "MKLDNN", "OPENGL" (the names used in serialized blob types).
std::string DeviceTypeName(int type);
std::string DeviceString(const Device& d);  // "CPU" or "CUDA:1"

}  // namespace caffe2
