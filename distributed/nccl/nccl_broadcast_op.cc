// NCCLBroadcast: every X_i (in place) becomes X_root (contract in nccl_op.h).
#include "distributed/nccl/nccl_op.h"

namespace caffe2 {
namespace {

class NcclBroadcastOp final : public NcclOpBase {
 public:
  NcclBroadcastOp(const OperatorDef& def, Workspace* ws) : NcclOpBase(def, ws), root_(Root()) {}

 protected:
  void PrepareOutputs(std::vector<Rank>& ranks) override {
    for (size_t i = 0; i < ranks.size(); ++i) {
      ranks[i].y = OutputOn(static_cast<int>(i), ranks[i].gpu, ranks[i].x->dims(), *ranks[i].x);
    }
  }
  ncclResult_t Enqueue(const Rank& rank, size_t count, ncclDataType_t type, ncclComm_t comm,
                       cudaStream_t stream) override {
    return ncclBroadcast(rank.in, rank.out, count, type, root_, comm, stream);
  }

 private:
  int root_;
};

}  // namespace

REGISTER_CUDA_OPERATOR(NCCLBroadcast, NcclBroadcastOp);

}  // namespace caffe2
