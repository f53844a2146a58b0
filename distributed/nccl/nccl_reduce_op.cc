// NCCLReduce: Y = sum of every X_j, on X_root's GPU (contract in nccl_op.h).
#include "distributed/nccl/nccl_op.h"

namespace caffe2 {
namespace {

class NcclReduceOp final : public NcclOpBase {
 public:
  NcclReduceOp(const OperatorDef& def, Workspace* ws) : NcclOpBase(def, ws), root_(Root()) {
    C2_ENFORCE(root_ == 0 || !IsInputOutputAlias(0, 0), "output 0 ('", def.output(0),
               "') is input 0 in place, which can hold the sum only with root 0; got root ", root_);
  }

 protected:
  void PrepareOutputs(std::vector<Rank>& ranks) override {
    Rank& root = ranks[root_];
    root.y = OutputOn(0, root.gpu, root.x->dims(), *root.x);
  }
  ncclResult_t Enqueue(const Rank& rank, size_t count, ncclDataType_t type, ncclComm_t comm,
                       cudaStream_t stream) override {
    // rank.out is null except on the root, as NCCL allows.
    return ncclReduce(rank.in, rank.out, count, type, ncclSum, root_, comm, stream);
  }

 private:
  int root_;
};

}  // namespace

REGISTER_CUDA_OPERATOR(NCCLReduce, NcclReduceOp);

}  // namespace caffe2
