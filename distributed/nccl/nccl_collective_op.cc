#include "distributed/nccl/nccl_collective_op.h"

#include "core/workspace.h"
#include "distributed/nccl/nccl_error.h"

namespace caffe2 {

NcclCollectiveOpBase::NcclCollectiveOpBase(const OperatorDef& def, Workspace* ws)
    : Operator<CUDAContext>(def, ws), CollectiveOp(*this, ws) {}

void NcclCollectiveOpBase::SwitchToDevice(int stream_id) {
  stream_id_ = stream_id;
  Operator<CUDAContext>::SwitchToDevice(stream_id);
}

std::exception_ptr NcclCollectiveOpBase::WireFailure(std::exception_ptr error) {
  try {
    std::rethrow_exception(error);
  } catch (const NcclError&) {
    return error;
  } catch (...) {
    return nullptr;
  }
}

NcclWorld& NcclCollectiveOpBase::World() {
  const Blob& blob = InputBlob(0);
  C2_ENFORCE(blob.IsType<NcclWorldPtr>() && blob.Get<NcclWorldPtr>(), "input 0 ('",
             debug_def().input(0),
             "') must be an NCCL common world (CreateCommonWorld or "
             "CloneCommonWorld with engine='NCCL') but holds ",
             blob.TypeName());
  return *blob.Get<NcclWorldPtr>();
}

std::vector<NcclCollectiveOpBase::Buffer> NcclCollectiveOpBase::Buffers(int first, bool in_place) {
  NcclWorld& world = World();
  const std::vector<int>& gpus = world.gpus();
  const int k = world.local_size();
  C2_ENFORCE(InputSize() >= first + k, world.Describe(), " has ", k,
             " local GPU(s), so the op "
             "needs ",
             k, " buffer(s) from input ", first, " on, one per GPU; it has ", InputSize() - first);
  std::vector<Buffer> buffers;
  for (int i = 0; i < k; ++i) {
    const int index = first + i;
    const Tensor& x = Input(index);
    const std::string name = MakeString("input ", index, " ('", debug_def().input(index), "')");
    C2_ENFORCE(x.device().type == kCUDA && x.device().id == gpus[i], name, " is on ",
               DeviceString(x.device()), " but buffer ", i, " must be on GPU ", gpus[i],
               " (buffers follow the common world's GPU order ", world.Describe(), ")");
    C2_ENFORCE(x.initialized() && x.dtype() != DataType::UNDEFINED, name, " holds no data yet");
    if (i > 0) {
      const Tensor& x0 = *buffers[0].tensor;
      C2_ENFORCE(x.dtype() == x0.dtype() && x.numel() == x0.numel(),
                 "every buffer must have the "
                 "same size and dtype: input ",
                 first, " ('", debug_def().input(first), "') is ", x0.numel(), " x ",
                 DataTypeName(x0.dtype()), " but ", name, " is ", x.numel(), " x ",
                 DataTypeName(x.dtype()));
    }
    Buffer buffer;
    if (in_place) {
      C2_ENFORCE(IsInputOutputAlias(index, index - first), name, " must be output ", index - first,
                 " too (the op works in place)");
      Tensor* tensor = OutputBlob(index - first)->GetMutable<Tensor>();
      buffer.tensor = tensor;
      buffer.out = tensor->raw_mutable_data();
      buffer.in = buffer.out;
    } else {
      buffer.tensor = &x;
      buffer.in = x.raw_data();
    }
    buffers.push_back(buffer);
  }
  return buffers;
}

}  // namespace caffe2
