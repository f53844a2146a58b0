// Error checking for NCCL calls (built only with NCCL): C2_NCCL_CHECK throws EnforceNotMet naming
// the call, NCCL's error string, its code and NCCL's last error message (which says what failed
// inside NCCL, e.g. "Duplicate GPU detected").
#pragma once

#include <nccl.h>

#include <string>

#include "core/enforce.h"

namespace caffe2 {

// "<error string> (<code>)", plus NCCL's last error message when it has one.
std::string NcclErrorText(ncclResult_t result, ncclComm_t comm = nullptr);

}  // namespace caffe2

#define C2_NCCL_CHECK(expr)                                                  \
  do {                                                                       \
    ncclResult_t c2_nccl_status = (expr);                                    \
    C2_ENFORCE(c2_nccl_status == ncclSuccess, "NCCL error in ", #expr, ": ", \
               ::caffe2::NcclErrorText(c2_nccl_status));                     \
  } while (0)
