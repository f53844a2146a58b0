#include "distributed/nccl/nccl_op.h"

#include <mutex>

#include "core/cuda/cuda_check.h"
#include "distributed/nccl/nccl_check.h"
#include "distributed/nccl/nccl_clique.h"
#include "distributed/nccl/nccl_types.h"

namespace caffe2 {
namespace {

std::string Describe(const Tensor& t) {
  return MakeString(DataTypeName(t.dtype()), " ", Tensor::DimsString(t.dims()));
}

}  // namespace

NcclOpBase::NcclOpBase(const OperatorDef& def, Workspace* ws) : Operator<CUDAContext>(def, ws) {}

void NcclOpBase::SwitchToDevice(int stream_id) {
  stream_id_ = stream_id;
  Operator<CUDAContext>::SwitchToDevice(stream_id);
}

std::string NcclOpBase::InputName(int i) const {
  return MakeString("input ", i, " ('", debug_def().input(i), "')");
}

int NcclOpBase::Root() const {
  const int root = GetSingleArgument<int>("root", 0);
  C2_ENFORCE(root >= 0 && root < InputSize(), "root ", root, " is not an input index: the op has ",
             InputSize(), " input(s), one per GPU");
  return root;
}

Tensor* NcclOpBase::OutputOn(int index, int gpu, const std::vector<int64_t>& dims,
                             const Tensor& x) {
  // Not Output(index): that would move the tensor to the op's own GPU.
  Tensor* y = OutputBlob(index)->GetMutableTensor(Device{kCUDA, gpu});
  y->Resize(dims);
  y->raw_mutable_data(x.meta());
  return y;
}

std::vector<NcclOpBase::Rank> NcclOpBase::ValidatedRanks() const {
  std::vector<Rank> ranks;
  for (int i = 0; i < InputSize(); ++i) {
    const Tensor& x = Input(i);
    C2_ENFORCE(x.device().type == kCUDA, InputName(i), " is a ", DeviceString(x.device()),
               " tensor; NCCL ops take one CUDA tensor per GPU");
    C2_ENFORCE(x.initialized() && x.dtype() != DataType::UNDEFINED, InputName(i),
               " holds no data yet");
    for (size_t j = 0; j < ranks.size(); ++j) {
      C2_ENFORCE(ranks[j].gpu != x.device().id, InputName(static_cast<int>(j)), " and ",
                 InputName(i), " are both on GPU ", x.device().id,
                 "; each input must be on a different GPU");
    }
    if (i > 0) {
      const Tensor& x0 = *ranks[0].x;
      C2_ENFORCE(x.dtype() == x0.dtype() && x.numel() == x0.numel(),
                 "every input must have the "
                 "same dtype and size: ",
                 InputName(0), " is ", Describe(x0), " but ", InputName(i), " is ", Describe(x));
    }
    Rank rank;
    rank.x = &x;
    rank.gpu = x.device().id;
    ranks.push_back(rank);
  }
  for (int a = 0; a < OutputSize(); ++a) {
    for (int b = a + 1; b < OutputSize(); ++b) {
      C2_ENFORCE(debug_def().output(a) != debug_def().output(b), "outputs ", a, " and ", b,
                 " are the same blob ('", debug_def().output(a), "'); each GPU needs its own");
    }
  }
  return ranks;
}

bool NcclOpBase::RunOnDevice() {
  std::vector<Rank> ranks = ValidatedRanks();
  const ncclDataType_t type = NcclTypeOf(ranks[0].x->dtype(), InputName(0));
  PrepareOutputs(ranks);
  for (Rank& rank : ranks) {
    rank.in = rank.x->raw_data();
    rank.out = rank.y ? rank.y->raw_mutable_data() : nullptr;
  }
  const size_t count = static_cast<size_t>(ranks[0].x->numel());
  std::vector<cudaStream_t> streams;
  for (const Rank& rank : ranks) streams.push_back(CUDAContext::Stream(rank.gpu, stream_id_));

  if (ranks.size() == 1) {
    // A group of one: the result is the input itself.
    const Rank& rank = ranks[0];
    if (rank.out != nullptr && rank.out != rank.in && rank.x->nbytes() > 0) {
      C2_CUDA_CHECK(cudaSetDevice(rank.gpu));
      C2_CUDA_CHECK(cudaMemcpyAsync(rank.out, rank.in, rank.x->nbytes(), cudaMemcpyDeviceToDevice,
                                    streams[0]));
      C2_CUDA_CHECK(cudaStreamSynchronize(streams[0]));
    }
  } else if (count > 0) {
    std::vector<int> gpus;
    for (const Rank& rank : ranks) gpus.push_back(rank.gpu);
    std::lock_guard<std::mutex> lock(NcclLaunchMutex());
    const NcclClique& clique = GetNcclClique(gpus);
    C2_NCCL_CHECK(ncclGroupStart());
    ncclResult_t failure = ncclSuccess;
    size_t failed = 0;
    for (size_t i = 0; i < ranks.size() && failure == ncclSuccess; ++i) {
      failure = Enqueue(ranks[i], count, type, clique.comms[i], streams[i]);
      failed = i;
    }
    const ncclResult_t end = ncclGroupEnd();
    C2_ENFORCE(failure == ncclSuccess, "NCCL refused the call of ",
               InputName(static_cast<int>(failed)), " on GPU ", ranks[failed].gpu, ": ",
               NcclErrorText(failure));
    C2_ENFORCE(end == ncclSuccess, "ncclGroupEnd failed: ", NcclErrorText(end));
    for (size_t i = 0; i < ranks.size(); ++i) {
      C2_CUDA_CHECK(cudaSetDevice(ranks[i].gpu));
      C2_CUDA_CHECK(cudaStreamSynchronize(streams[i]));
    }
  }
  C2_CUDA_CHECK(cudaSetDevice(context_.gpu_id()));
  return true;
}

}  // namespace caffe2
