// NCCLAllGather: Y_i, of dims [n] + dims(X_i), holds X_0..X_n-1 in input order, on X_i's GPU
// (contract in nccl_op.h).
#include "distributed/nccl/nccl_op.h"

namespace caffe2 {
namespace {

class NcclAllGatherOp final : public NcclOpBase {
 public:
  using NcclOpBase::NcclOpBase;

 protected:
  void PrepareOutputs(std::vector<Rank>& ranks) override {
    for (size_t i = 0; i < ranks.size(); ++i) {
      std::vector<int64_t> dims = ranks[i].x->dims();
      dims.insert(dims.begin(), static_cast<int64_t>(ranks.size()));
      ranks[i].y = OutputOn(static_cast<int>(i), ranks[i].gpu, dims, *ranks[i].x);
    }
  }
  ncclResult_t Enqueue(const Rank& rank, size_t count, ncclDataType_t type, ncclComm_t comm,
                       cudaStream_t stream) override {
    // Rank j's `count` elements land at offset j * count of every output.
    return ncclAllGather(rank.in, rank.out, count, type, comm, stream);
  }
};

}  // namespace

REGISTER_CUDA_OPERATOR(NCCLAllGather, NcclAllGatherOp);

}  // namespace caffe2
