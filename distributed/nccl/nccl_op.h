// The single-process NCCL operators (ops spec §3.6; CUDA only, built with NCCL).
//
// Every input is a CUDA tensor on a GPU of its own (the GPU comes from the tensor, not from the
// op's device option); NCCL rank i is input i, on its GPU. All inputs have one dtype (float,
// float16, double, int32, int64, int8, uint8) and one element count. Output i lives on input i's
// GPU. Reductions are sums.
//
//   NCCLAllreduce      [X_0..X_n-1] -> [Y_0..Y_n-1]  Y_i = sum_j X_j; in place allowed (Y_i = X_i).
//   NCCLBroadcast      [X_0..X_n-1] -> [X_0..X_n-1]  in place (enforced); every X_i = X_root.
//   NCCLReduce         [X_0..X_n-1] -> [Y]           Y = sum_j X_j on X_root's GPU; in place only
//                                                     as Y = X_0, which needs root 0.
//   NCCLAllGather      [X_0..X_n-1] -> [Y_0..Y_n-1]  Y_i of dims [n] + dims(X_i): Y_i[j] = X_j.
//   NCCLReduceScatter  [X_0..X_n-1] -> [Y_0..Y_n-1]  X_i of dims [n, ...]: Y_i = sum_j X_j[i],
//                                                     of dims dims(X_i)[1:].
// `root` (int, default 0) is an input index. One input is a group of one: the output is a copy of
// the input (or the input itself, in place). No gradients.
//
// Run returns once the results are ready: each GPU's part is enqueued on that GPU's stream (the
// stream id the op runs with) inside one ncclGroupStart/End, then every stream is synchronised.
// Errors name the op, the input (index and blob) and the values: a CPU input, two inputs on one
// GPU, mismatched dtypes or sizes, an unsupported dtype, a root out of range.
#pragma once

#include <nccl.h>

#include <cstdint>
#include <string>
#include <vector>

#include "core/cuda/cuda_context.h"
#include "core/operator.h"

namespace caffe2 {

class NcclOpBase : public Operator<CUDAContext> {
 public:
  NcclOpBase(const OperatorDef& def, Workspace* ws);

 protected:
  // One rank of the group: its input and output tensors (y null when it has none), its GPU, and
  // the buffers its NCCL call uses (set by the base once the outputs are prepared).
  struct Rank {
    const Tensor* x = nullptr;
    Tensor* y = nullptr;
    int gpu = 0;
    const void* in = nullptr;
    void* out = nullptr;
  };

  bool RunOnDevice() final;
  void SwitchToDevice(int stream_id) override;

  // Sizes the outputs of the validated ranks (sets Rank::y, on the right GPU).
  virtual void PrepareOutputs(std::vector<Rank>& ranks) = 0;
  // Enqueues one rank's NCCL call (count = elements of each input) on `stream`; called between
  // ncclGroupStart and ncclGroupEnd, so it must not throw.
  virtual ncclResult_t Enqueue(const Rank& rank, size_t count, ncclDataType_t type, ncclComm_t comm,
                               cudaStream_t stream) = 0;

  // Output `index` as a tensor on `gpu`, sized `dims`, with X's dtype.
  Tensor* OutputOn(int index, int gpu, const std::vector<int64_t>& dims, const Tensor& x);
  // The `root` argument, checked against the number of inputs.
  int Root() const;
  // "input 1 ('x1')"
  std::string InputName(int i) const;

 private:
  std::vector<Rank> ValidatedRanks() const;
  int stream_id_ = 0;
};

}  // namespace caffe2
