// Allgather (engine NCCL, CUDA): inputs [common_world, X_0..X_k-1] (X_i on the world's GPU i, one
// size n and dtype), output Y on the world's first GPU: 1-D, k * n * world size elements, ordered
// by process, then by input (NCCL rank process * k + i). Frame: nccl_collective_op.h.
#include <memory>

#include "distributed/nccl/nccl_collective_op.h"
#include "distributed/nccl/nccl_types.h"

namespace caffe2 {
namespace {

class NcclWorldAllgatherOp final : public NcclCollectiveOpBase {
 public:
  using NcclCollectiveOpBase::NcclCollectiveOpBase;

 protected:
  void RunCollective() override {
    const std::vector<Buffer> buffers = Buffers(1, /*in_place=*/false);
    C2_ENFORCE(InputSize() == 1 + static_cast<int>(buffers.size()), "takes the common world and ",
               buffers.size(), " buffer(s), one per local GPU of the world; got ", InputSize() - 1,
               " buffer(s)");
    NcclWorld& world = World();
    const Tensor& x0 = *buffers[0].tensor;
    const ncclDataType_t type = NcclTypeOf(x0.dtype(), "the buffers");
    const size_t count = static_cast<size_t>(x0.numel());
    const std::vector<int64_t> dims{static_cast<int64_t>(count) * world.nccl_size()};
    // NCCL gives every rank the whole result: GPU 0's lands in Y, the others' in scratch space.
    std::vector<void*> out;
    Tensor* y = OutputBlob(0)->GetMutableTensor(Device{kCUDA, world.gpus()[0]});
    y->Resize(dims);
    out.push_back(y->raw_mutable_data(x0.meta()));
    scratch_.resize(buffers.size() - 1);
    for (size_t i = 1; i < buffers.size(); ++i) {
      if (!scratch_[i - 1])
        scratch_[i - 1] = std::make_unique<Tensor>(Device{kCUDA, world.gpus()[i]});
      scratch_[i - 1]->Resize(dims);
      out.push_back(scratch_[i - 1]->raw_mutable_data(x0.meta()));
    }
    if (count == 0) return;
    world.Run(What(), stream_id(), [&](int i, ncclComm_t comm, cudaStream_t stream) {
      return ncclAllGather(buffers[i].in, out[i], count, type, comm, stream);
    });
  }

 private:
  std::vector<std::unique_ptr<Tensor>> scratch_;
};

}  // namespace

REGISTER_CUDA_OPERATOR(Allgather_ENGINE_NCCL, NcclWorldAllgatherOp);

}  // namespace caffe2
