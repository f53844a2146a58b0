// NCCLReduceScatter: X_i has dims [n, ...]; Y_i = sum over j of X_j[i], of dims dims(X_i)[1:], on
// X_i's GPU (contract in nccl_op.h).
#include "distributed/nccl/nccl_op.h"

namespace caffe2 {
namespace {

class NcclReduceScatterOp final : public NcclOpBase {
 public:
  using NcclOpBase::NcclOpBase;

 protected:
  void PrepareOutputs(std::vector<Rank>& ranks) override {
    const int64_t n = static_cast<int64_t>(ranks.size());
    for (size_t i = 0; i < ranks.size(); ++i) {
      const Tensor& x = *ranks[i].x;
      C2_ENFORCE(x.ndim() >= 1 && x.dim(0) == n, InputName(static_cast<int>(i)), " has dims ",
                 Tensor::DimsString(x.dims()),
                 "; its first dimension must be the number of "
                 "inputs (",
                 n, "), one block per GPU");
      const std::vector<int64_t> dims(x.dims().begin() + 1, x.dims().end());
      ranks[i].y = OutputOn(static_cast<int>(i), ranks[i].gpu, dims, x);
    }
  }
  ncclResult_t Enqueue(const Rank& rank, size_t count, ncclDataType_t type, ncclComm_t comm,
                       cudaStream_t stream) override {
    // Every input holds one block of count / n elements per rank; rank i receives block i.
    return ncclReduceScatter(rank.in, rank.out, count / static_cast<size_t>(InputSize()), type,
                             ncclSum, comm, stream);
  }
};

}  // namespace

REGISTER_CUDA_OPERATOR(NCCLReduceScatter, NcclReduceScatterOp);

}  // namespace caffe2
