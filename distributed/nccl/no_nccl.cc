// Chosen by CMake when the CUDA backend is built without NCCL (C2_USE_NCCL=OFF, or nccl.h/libnccl
// missing): the NCCL* operators exist for CUDA but say that this build has no NCCL, and the NCCL
// engine of the communication ops is not registered.
#include "core/operator.h"

namespace caffe2 {
namespace {

class NoNcclOp final : public OperatorBase {
 public:
  NoNcclOp(const OperatorDef& def, Workspace* ws) : OperatorBase(def, ws) {
    C2_THROW(
        "this build has no NCCL (C2_USE_NCCL=OFF, or nccl.h / libnccl were not found in the "
        "CUDA toolkit at configure time); rebuild with NCCL, or use Copy and Sum across GPUs");
  }

 protected:
  bool RunOnDevice() override { return false; }
};

}  // namespace

REGISTER_CUDA_OPERATOR(NCCLAllreduce, NoNcclOp);
REGISTER_CUDA_OPERATOR(NCCLBroadcast, NoNcclOp);
REGISTER_CUDA_OPERATOR(NCCLReduce, NoNcclOp);
REGISTER_CUDA_OPERATOR(NCCLAllGather, NoNcclOp);
REGISTER_CUDA_OPERATOR(NCCLReduceScatter, NoNcclOp);

}  // namespace caffe2
