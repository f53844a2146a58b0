// The common world ops under engine NCCL (CUDA; built with NCCL). World semantics: nccl_world.h.
//
// CreateCommonWorld  [store_handler] -> [comm_world]  size (processes), rank (this process),
//     gpus (repeated int, default: the op's GPU; beyond upstream) - this process's GPUs, one NCCL
//     rank each, the same number in every process; timeout_ms (-1: 30 s) for the rendezvous, the
//     communicator setup and every collective; status_blob. The op's name is the rendezvous
//     namespace and must be set. transport and interface are accepted and ignored (NCCL picks
//     its network; NCCL_SOCKET_IFNAME / NCCL_IB_HCA steer it); mpi_rendezvous is refused: the
//     NCCL engine needs a store.
// CloneCommonWorld   [comm_world] -> [comm_world2]  status_blob: a new world with the same ranks,
//     GPUs and timeout, rendezvoused through the same store under this op's name (else its output
//     name).
// DestroyCommonWorld [comm_world] -> [comm_world] in place: lets go of the world (its
//     communicators are destroyed when no other blob holds it). CPU and CUDA.
#include "core/cuda/cuda_context.h"
#include "core/operator.h"
#include "core/workspace.h"
#include "distributed/collective.h"
#include "distributed/nccl/nccl_collective_op.h"
#include "distributed/nccl/nccl_error.h"
#include "distributed/nccl/nccl_world.h"
#include "distributed/op_helpers.h"

namespace caffe2 {
namespace {

class NcclCreateCommonWorldOp final : public Operator<CUDAContext>, public CollectiveOp {
 public:
  NcclCreateCommonWorldOp(const OperatorDef& def, Workspace* ws)
      : Operator<CUDAContext>(def, ws), CollectiveOp(*this, ws) {
    C2_ENFORCE(def.has_name(),
               "needs a name: it is the rendezvous namespace, and every shard must "
               "give its CreateCommonWorld ops the same names in the same order");
    C2_ENFORCE(!GetSingleArgument<bool>("mpi_rendezvous", false),
               "engine NCCL rendezvouses "
               "through a store handler; mpi_rendezvous is not supported (use engine GLOO, or a "
               "file or Redis store)");
    C2_ENFORCE(InputSize() == 1,
               "needs the store handler as input 0 (FileStoreHandlerCreate or "
               "RedisStoreHandlerCreate)");
    options_.name = def.name();
    options_.size = GetSingleArgument<int>("size", 0);
    options_.rank = GetSingleArgument<int>("rank", 0);
    options_.gpus = GetRepeatedArgument<int>("gpus", {context_.gpu_id()});
    options_.timeout = std::chrono::milliseconds(GetSingleArgument<int64_t>("timeout_ms", -1));
    C2_ENFORCE(options_.size >= 1, "argument 'size' (the number of processes) must be >= 1, got ",
               options_.size);
    C2_ENFORCE(options_.rank >= 0 && options_.rank < options_.size,
               "argument 'rank' must be in "
               "[0, size) = [0, ",
               options_.size, "), got ", options_.rank);
    C2_ENFORCE(!options_.gpus.empty(), "argument 'gpus' lists no GPU");
  }

 protected:
  bool RunOnDevice() override { return RunReportingWireFailures(); }
  void RunCollective() override {
    const StoreHandlerPtr& store = StoreHandlerInput(*this, 0);
    NcclWorldPtr world = NcclWorld::Create(store, options_);
    OutputBlob(0)->Reset(new NcclWorldPtr(std::move(world)));
  }
  std::exception_ptr WireFailure(std::exception_ptr error) override {
    return RendezvousWireFailure(error);
  }

 private:
  NcclWorldOptions options_;
};

class NcclCloneCommonWorldOp final : public Operator<CUDAContext>, public CollectiveOp {
 public:
  NcclCloneCommonWorldOp(const OperatorDef& def, Workspace* ws)
      : Operator<CUDAContext>(def, ws), CollectiveOp(*this, ws) {}

 protected:
  bool RunOnDevice() override { return RunReportingWireFailures(); }
  std::exception_ptr WireFailure(std::exception_ptr error) override {
    return RendezvousWireFailure(error);
  }
  void RunCollective() override {
    const Blob& blob = InputBlob(0);
    C2_ENFORCE(blob.IsType<NcclWorldPtr>() && blob.Get<NcclWorldPtr>(), "input 0 ('",
               debug_def().input(0), "') must be an NCCL common world (engine NCCL), but holds ",
               blob.TypeName());
    const std::string& name =
        debug_def().name().empty() ? debug_def().output(0) : debug_def().name();
    NcclWorldPtr clone = blob.Get<NcclWorldPtr>()->Clone(name);
    OutputBlob(0)->Reset(new NcclWorldPtr(std::move(clone)));
  }
};

class NcclDestroyCommonWorldOp final : public OperatorBase {
 public:
  using OperatorBase::OperatorBase;

 protected:
  bool RunOnDevice() override {
    Blob* blob = OutputBlob(0);
    if (blob->IsEmpty()) return true;
    C2_ENFORCE(blob->IsType<NcclWorldPtr>(), "input 0 ('", debug_def().input(0),
               "') must be an NCCL common world, but holds ", blob->TypeName());
    blob->GetMutable<NcclWorldPtr>()->reset();
    return true;
  }
};

}  // namespace

REGISTER_CUDA_OPERATOR(CreateCommonWorld_ENGINE_NCCL, NcclCreateCommonWorldOp);
REGISTER_CUDA_OPERATOR(CloneCommonWorld_ENGINE_NCCL, NcclCloneCommonWorldOp);
REGISTER_CPU_OPERATOR(DestroyCommonWorld_ENGINE_NCCL, NcclDestroyCommonWorldOp);
REGISTER_CUDA_OPERATOR(DestroyCommonWorld_ENGINE_NCCL, NcclDestroyCommonWorldOp);

}  // namespace caffe2
