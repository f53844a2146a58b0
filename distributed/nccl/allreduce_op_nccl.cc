// Allreduce (engine NCCL, CUDA): sums the world's local GPU buffers and the same buffers of every
// process; every buffer ends with the total. Inputs [common_world, X_0..X_k-1] (X_i on the
// world's GPU i), outputs [X_0..X_k-1] in place. Frame: nccl_collective_op.h.
#include "distributed/nccl/nccl_collective_op.h"
#include "distributed/nccl/nccl_types.h"

namespace caffe2 {
namespace {

class NcclWorldAllreduceOp final : public NcclCollectiveOpBase {
 public:
  using NcclCollectiveOpBase::NcclCollectiveOpBase;

 protected:
  void RunCollective() override {
    const std::vector<Buffer> buffers = Buffers(1, /*in_place=*/true);
    C2_ENFORCE(InputSize() == 1 + static_cast<int>(buffers.size()), "takes the common world and ",
               buffers.size(), " buffer(s), one per local GPU of the world; got ", InputSize() - 1,
               " buffer(s)");
    const ncclDataType_t type = NcclTypeOf(buffers[0].tensor->dtype(), "the buffers");
    const size_t count = static_cast<size_t>(buffers[0].tensor->numel());
    if (count == 0) return;
    World().Run(What(), stream_id(), [&](int i, ncclComm_t comm, cudaStream_t stream) {
      return ncclAllReduce(buffers[i].in, buffers[i].out, count, type, ncclSum, comm, stream);
    });
  }
};

}  // namespace

REGISTER_CUDA_OPERATOR(Allreduce_ENGINE_NCCL, NcclWorldAllreduceOp);

}  // namespace caffe2
