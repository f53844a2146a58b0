// What this build contains: the backends and their versions, the switches that were on and the CPU
// flags, as upstream's get_build_options() reports them (keys such as USE_CUDA, USE_NCCL, USE_GLOO,
// USE_MPI, USE_REDIS, CUDA_VERSION, CUDNN_VERSION, NCCL_VERSION, plus USE_DNNL and DNNL_VERSION).
// Values are "ON"/"OFF" for switches and version strings ("" when the backend is not built).
// Generated at configure time from core/build_info.cc.in (cmake/BuildInfo.cmake).
#pragma once

#include <map>
#include <string>

namespace caffe2 {

const std::map<std::string, std::string>& BuildOptions();

}  // namespace caffe2
