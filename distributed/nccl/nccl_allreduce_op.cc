// NCCLAllreduce: Y_i = sum of every X_j, on X_i's GPU (contract in nccl_op.h).
#include "distributed/nccl/nccl_op.h"

namespace caffe2 {
namespace {

class NcclAllreduceOp final : public NcclOpBase {
 public:
  using NcclOpBase::NcclOpBase;

 protected:
  void PrepareOutputs(std::vector<Rank>& ranks) override {
    for (size_t i = 0; i < ranks.size(); ++i) {
      ranks[i].y = OutputOn(static_cast<int>(i), ranks[i].gpu, ranks[i].x->dims(), *ranks[i].x);
    }
  }
  ncclResult_t Enqueue(const Rank& rank, size_t count, ncclDataType_t type, ncclComm_t comm,
                       cudaStream_t stream) override {
    return ncclAllReduce(rank.in, rank.out, count, type, ncclSum, comm, stream);
  }
};

}  // namespace

REGISTER_CUDA_OPERATOR(NCCLAllreduce, NcclAllreduceOp);

}  // namespace caffe2
