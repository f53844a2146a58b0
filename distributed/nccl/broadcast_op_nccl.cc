// Broadcast (engine NCCL, CUDA): the first buffer of process `root` (int, default 0: a rank of the
// world, not a GPU) is copied into every buffer of every process. Inputs [common_world,
// X_0..X_k-1] (X_i on the world's GPU i), outputs [X_0..X_k-1] in place. Frame:
// nccl_collective_op.h.
#include "distributed/nccl/nccl_collective_op.h"
#include "distributed/nccl/nccl_types.h"

namespace caffe2 {
namespace {

class NcclWorldBroadcastOp final : public NcclCollectiveOpBase {
 public:
  NcclWorldBroadcastOp(const OperatorDef& def, Workspace* ws)
      : NcclCollectiveOpBase(def, ws), root_(GetSingleArgument<int>("root", 0)) {}

 protected:
  void RunCollective() override {
    const std::vector<Buffer> buffers = Buffers(1, /*in_place=*/true);
    C2_ENFORCE(InputSize() == 1 + static_cast<int>(buffers.size()), "takes the common world and ",
               buffers.size(), " buffer(s), one per local GPU of the world; got ", InputSize() - 1,
               " buffer(s)");
    NcclWorld& world = World();
    C2_ENFORCE(root_ >= 0 && root_ < world.size(), "root ", root_, " is not a rank of the ",
               world.size(), "-process ", world.Describe());
    const ncclDataType_t type = NcclTypeOf(buffers[0].tensor->dtype(), "the buffers");
    const size_t count = static_cast<size_t>(buffers[0].tensor->numel());
    if (count == 0) return;
    // The root process's first GPU is NCCL rank root * k.
    const int nccl_root = root_ * world.local_size();
    world.Run(What(), stream_id(), [&](int i, ncclComm_t comm, cudaStream_t stream) {
      return ncclBroadcast(buffers[i].in, buffers[i].out, count, type, nccl_root, comm, stream);
    });
  }

 private:
  int root_;
};

}  // namespace

REGISTER_CUDA_OPERATOR(Broadcast_ENGINE_NCCL, NcclWorldBroadcastOp);

}  // namespace caffe2
