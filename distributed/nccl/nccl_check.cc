#include "distributed/nccl/nccl_check.h"

namespace caffe2 {

std::string NcclErrorText(ncclResult_t result, ncclComm_t comm) {
  std::string text = MakeString(ncclGetErrorString(result), " (", static_cast<int>(result), ")");
  const char* last = ncclGetLastError(comm);
  if (last != nullptr && *last != '\0') text += MakeString(": ", last);
  return text;
}

}  // namespace caffe2
