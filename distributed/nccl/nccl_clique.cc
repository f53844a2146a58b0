#include "distributed/nccl/nccl_clique.h"

#include <map>
#include <memory>

#include "core/cuda/cuda_check.h"
#include "distributed/nccl/nccl_check.h"

namespace caffe2 {

std::mutex& NcclLaunchMutex() {
  static std::mutex mutex;
  return mutex;
}

const NcclClique& GetNcclClique(const std::vector<int>& devices) {
  // Leaked on purpose (see the header): the map outlives every op.
  static auto* cliques = new std::map<std::vector<int>, std::unique_ptr<NcclClique>>();
  auto& slot = (*cliques)[devices];
  if (!slot) {
    auto clique = std::make_unique<NcclClique>();
    clique->devices = devices;
    clique->comms.resize(devices.size(), nullptr);
    int current = 0;
    C2_CUDA_CHECK(cudaGetDevice(&current));
    const ncclResult_t result =
        ncclCommInitAll(clique->comms.data(), static_cast<int>(devices.size()), devices.data());
    cudaSetDevice(current);  // ncclCommInitAll may leave another device current
    if (result != ncclSuccess) {
      cliques->erase(devices);
      std::string list;
      for (int d : devices) list += (list.empty() ? "" : ", ") + std::to_string(d);
      C2_THROW("could not create the NCCL communicators of GPUs [", list,
               "]: ", NcclErrorText(result));
    }
    slot = std::move(clique);
  }
  return *slot;
}

}  // namespace caffe2
