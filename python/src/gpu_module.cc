// caffe2.python.caffe2_pybind11_state_gpu: everything of the CPU module plus the CUDA functions
// (spec §2.1, §2.3). Importing it on a machine without a GPU works; num_cuda_devices() is 0 there.
#include <cuda_runtime.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <map>
#include <string>
#include <vector>

#include "core/cuda/cuda_check.h"
#include "core/cuda/cuda_context.h"
#include "core/operator.h"

namespace py = pybind11;

PYBIND11_MODULE(caffe2_pybind11_state_gpu, m) {
  py::module cpu = py::module::import("caffe2.python.caffe2_pybind11_state");
  for (auto item : cpu.attr("__dict__").cast<py::dict>()) {
    std::string name = py::str(item.first);
    if (name.rfind("__", 0) != 0) m.attr(name.c_str()) = item.second;
  }
  m.def("num_cuda_devices", &caffe2::NumCudaDevices);
  // Beyond upstream: the CUDA registry's keys alone (registered_operators() is the union).
  m.def("registered_cuda_operators", [] { return caffe2::OperatorRegistry::Keys(caffe2::kCUDA); });
  m.def("get_cuda_version", &caffe2::CudaRuntimeVersion);
  m.def("get_cudnn_version", &caffe2::CudnnVersion);
  m.def("get_device_properties", [](int device) {
    cudaDeviceProp prop;
    C2_CUDA_CHECK(cudaGetDeviceProperties(&prop, device));
    py::dict d;
    d["name"] = std::string(prop.name);
    d["major"] = prop.major;
    d["minor"] = prop.minor;
    d["totalGlobalMem"] = prop.totalGlobalMem;
    return d;
  });
  m.def("get_cuda_peer_access_pattern", [] {
    int n = caffe2::NumCudaDevices();
    std::vector<std::vector<bool>> pattern(n, std::vector<bool>(n, false));
    for (int i = 0; i < n; ++i) {
      for (int j = 0; j < n; ++j) {
        int can = i == j;
        if (i != j) C2_CUDA_CHECK(cudaDeviceCanAccessPeer(&can, i, j));
        pattern[i][j] = can != 0;
      }
    }
    return pattern;
  });
}
