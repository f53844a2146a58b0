// The shared frame of the communication ops under engine NCCL (CUDA; built with NCCL):
// Allreduce, Broadcast, Allgather and ReduceScatter keep the contract of their GLOO versions (ops
// spec §3.5; distributed/collective.h) on GPU buffers and an NcclWorld (nccl_world.h).
//
// - Input 0 is an NCCL common world (CreateCommonWorld / CloneCommonWorld with engine NCCL).
// - The buffers are one CUDA tensor per local GPU of the world, in the world's GPU order: buffer
//   i lives on gpus[i]; all of one dtype (float, float16, double, int32, int64, int8, uint8) and
//   one size. They are read (and, in place, written) by NCCL on every run, so unlike Gloo there
//   is no pointer-stability rule.
// - A failure on the wire or a timeout is an NcclError (a CollectiveIoError): it writes the status
//   blob and is rethrown.
// - Run returns once the result is on every local GPU; see nccl_world.h for timeouts and dead
//   peers (the world is aborted and every later collective on it fails).
#pragma once

#include <string>
#include <vector>

#include "core/cuda/cuda_context.h"
#include "core/operator.h"
#include "distributed/collective.h"
#include "distributed/op_helpers.h"
#include "distributed/nccl/nccl_world.h"

namespace caffe2 {

class NcclCollectiveOpBase : public Operator<CUDAContext>, public CollectiveOp {
 public:
  NcclCollectiveOpBase(const OperatorDef& def, Workspace* ws);

 protected:
  // One local buffer: its tensor and data (`out` is null unless the op writes it in place).
  struct Buffer {
    const Tensor* tensor = nullptr;
    const void* in = nullptr;
    void* out = nullptr;
  };

  bool RunOnDevice() final { return RunReportingWireFailures(); }
  void SwitchToDevice(int stream_id) override;
  // NcclError is the failure on the wire.
  std::exception_ptr WireFailure(std::exception_ptr error) final;

  NcclWorld& World();
  // Inputs [first, first + local GPUs of the world), checked as described above. `in_place`:
  // input first + i is output i (the op writes it).
  std::vector<Buffer> Buffers(int first, bool in_place);
  int stream_id() const { return stream_id_; }

 private:
  int stream_id_ = 0;
};

}  // namespace caffe2
