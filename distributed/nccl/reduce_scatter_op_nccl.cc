// ReduceScatter (engine NCCL, CUDA): inputs [common_world, X_0..X_k-1, recv_counts], outputs
// [X_0..X_k-1, recv_counts] in place, as with GLOO (ops spec §3.5): recv_counts is an int32
// vector (CPU or GPU) with one element count per process, summing to the buffer size; process r
// ends with its chunk of the sum over every buffer of every process (recv_counts[r] elements
// from offset recv_counts[0] + .. + recv_counts[r-1]) at the start of each of its buffers. The
// rest of each buffer is unspecified. Frame: nccl_collective_op.h.
//
// With one GPU per process and equal counts this is ncclReduceScatter (in place: process r's
// chunk arrives at its own offset); otherwise, as NCCL splits into equal blocks per NCCL rank,
// an ncclAllReduce. Either way the chunk is then moved to the front of each buffer.
#include <algorithm>
#include <numeric>

#include "core/cuda/cuda_check.h"
#include "distributed/nccl/nccl_collective_op.h"
#include "distributed/nccl/nccl_types.h"

namespace caffe2 {
namespace {

class NcclWorldReduceScatterOp final : public NcclCollectiveOpBase {
 public:
  using NcclCollectiveOpBase::NcclCollectiveOpBase;

 protected:
  void RunCollective() override {
    NcclWorld& world = World();
    const int k = world.local_size();
    C2_ENFORCE(InputSize() == k + 2, "takes the common world, ", k,
               " buffer(s) (one per local "
               "GPU of the world) and recv_counts; got ",
               InputSize(), " inputs");
    const std::vector<Buffer> buffers = Buffers(1, /*in_place=*/true);
    const std::vector<int64_t> counts = RecvCounts(world, buffers[0].tensor->numel());
    const ncclDataType_t type = NcclTypeOf(buffers[0].tensor->dtype(), "the buffers");
    const size_t count = static_cast<size_t>(buffers[0].tensor->numel());
    const size_t item = buffers[0].tensor->itemsize();
    const size_t mine = static_cast<size_t>(counts[world.rank()]);
    const size_t offset = static_cast<size_t>(
        std::accumulate(counts.begin(), counts.begin() + world.rank(), int64_t{0}));
    if (count == 0) return;
    const bool equal =
        std::all_of(counts.begin(), counts.end(), [&](int64_t c) { return c == counts[0]; });
    if (k == 1 && equal) {
      world.Run(What(), stream_id(), [&](int, ncclComm_t comm, cudaStream_t stream) {
        char* base = static_cast<char*>(buffers[0].out);
        return ncclReduceScatter(base, base + offset * item, mine, type, ncclSum, comm, stream);
      });
    } else {
      world.Run(What(), stream_id(), [&](int i, ncclComm_t comm, cudaStream_t stream) {
        return ncclAllReduce(buffers[i].in, buffers[i].out, count, type, ncclSum, comm, stream);
      });
    }
    if (offset == 0 || mine == 0) return;
    for (int i = 0; i < k; ++i)
      MoveToFront(world.gpus()[i], buffers[i], offset * item, mine * item);
  }

 private:
  // recv_counts, checked: one non-negative count per process, summing to `total`.
  std::vector<int64_t> RecvCounts(const NcclWorld& world, int64_t total) {
    const int index = InputSize() - 1;
    const Tensor& given = Input(index);
    C2_ENFORCE(IsInputOutputAlias(index, OutputSize() - 1), "recv_counts (input ", index,
               ") must also be the last output (the op works in place)");
    Tensor host(Device{kCPU, 0});
    host.CopyFrom(given);
    C2_ENFORCE(host.IsType<int32_t>() && host.numel() == world.size(), "recv_counts ('",
               debug_def().input(index),
               "') must be an int32 vector with one count per process "
               "(",
               world.size(), "), got ", given.DebugString());
    std::vector<int64_t> counts(host.data<int32_t>(), host.data<int32_t>() + host.numel());
    int64_t sum = 0;
    for (int64_t c : counts) {
      C2_ENFORCE(c >= 0, "recv_counts ('", debug_def().input(index), "') holds a negative count ",
                 c);
      sum += c;
    }
    C2_ENFORCE(sum == total, "recv_counts sum to ", sum, " but the buffers hold ", total,
               " elements");
    return counts;
  }

  // Copies `bytes` from `offset` to the start of the buffer (through scratch space when the two
  // ranges overlap), on the GPU's stream, and waits.
  void MoveToFront(int gpu, const Buffer& buffer, size_t offset, size_t bytes) {
    C2_CUDA_CHECK(cudaSetDevice(gpu));
    cudaStream_t stream = CUDAContext::Stream(gpu, stream_id());
    char* base = static_cast<char*>(buffer.out);
    if (offset >= bytes) {
      C2_CUDA_CHECK(cudaMemcpyAsync(base, base + offset, bytes, cudaMemcpyDeviceToDevice, stream));
    } else {
      Tensor scratch(std::vector<int64_t>{static_cast<int64_t>(bytes)}, Device{kCUDA, gpu});
      void* tmp = scratch.mutable_data<uint8_t>();
      C2_CUDA_CHECK(cudaMemcpyAsync(tmp, base + offset, bytes, cudaMemcpyDeviceToDevice, stream));
      C2_CUDA_CHECK(cudaMemcpyAsync(base, tmp, bytes, cudaMemcpyDeviceToDevice, stream));
      C2_CUDA_CHECK(cudaStreamSynchronize(stream));  // before scratch goes back to the allocator
    }
    C2_CUDA_CHECK(cudaStreamSynchronize(stream));
  }
};

}  // namespace

REGISTER_CUDA_OPERATOR(ReduceScatter_ENGINE_NCCL, NcclWorldReduceScatterOp);

}  // namespace caffe2
