// The common world ops (engine GLOO; ops spec §3.5).
//
// CreateCommonWorld  [store_handler] -> [comm_world]  size, rank, sync, transport ("tcp"),
//     interface (""), timeout_ms (-1: 30 s), status_blob, mpi_rendezvous. The op's name is the
//     rendezvous namespace and must be set (an explicitly empty name is accepted).
// CloneCommonWorld   [comm_world] -> [comm_world2]   sync, status_blob: same ranks, new pairs,
//     addresses exchanged over the existing world.
// DestroyCommonWorld [comm_world] -> [comm_world] in place: closes every connection once the other
//     ranks close theirs too (CloseGracefully; no-op when the blob is empty).
#include <gloo/context.h>

#include "core/operator.h"
#include "core/workspace.h"
#include "distributed/collective.h"
#include "distributed/gloo/collective_op.h"
#include "distributed/gloo/common_world.h"
#include "distributed/gloo/mpi_rendezvous.h"
#include "distributed/op_helpers.h"

namespace caffe2 {
namespace {

class CreateCommonWorldOp final : public OperatorBase, public CollectiveOp {
 public:
  CreateCommonWorldOp(const OperatorDef& def, Workspace* ws)
      : OperatorBase(def, ws),
        CollectiveOp(*this, ws),
        mpi_(GetSingleArgument<bool>("mpi_rendezvous", false)) {
    C2_ENFORCE(def.has_name(),
               "needs a name: it is the rendezvous namespace, and every shard must "
               "give its CreateCommonWorld ops the same names in the same order");
    options_.name = def.name();
    options_.size = GetSingleArgument<int>("size", 0);
    options_.rank = GetSingleArgument<int>("rank", 0);
    options_.sync = GetSingleArgument<bool>("sync", false);
    options_.transport = GetSingleArgument<std::string>("transport", "tcp");
    options_.interface = GetSingleArgument<std::string>("interface", "");
    const int64_t timeout_ms = GetSingleArgument<int64_t>("timeout_ms", -1);
    C2_ENFORCE(timeout_ms == -1 || timeout_ms > 0,
               "argument 'timeout_ms' must be positive (or -1 for the "
               "default 30 s), got ",
               timeout_ms);
    options_.timeout = std::chrono::milliseconds(timeout_ms);
    if (!mpi_) {
      C2_ENFORCE(InputSize() == 1,
                 "needs the store handler as input 0 (or mpi_rendezvous=1 "
                 "under mpirun)");
      C2_ENFORCE(options_.size >= 1, "argument 'size' (the number of ranks) must be >= 1, got ",
                 options_.size);
      C2_ENFORCE(options_.rank >= 0 && options_.rank < options_.size,
                 "argument 'rank' must be "
                 "in [0, size) = [0, ",
                 options_.size, "), got ", options_.rank);
    }
  }

 protected:
  bool RunOnDevice() override { return RunReportingWireFailures(); }
  void RunCollective() override {
    CommonWorldPtr world;
    if (mpi_) {
      world = CreateCommonWorldWithMpi(options_);
    } else {
      const StoreHandlerPtr& store = StoreHandlerInput(*this, 0);
      world = CreateCommonWorldOnStore(store, options_);
    }
    OutputBlob(0)->Reset(new CommonWorldPtr(std::move(world)));
  }
  std::exception_ptr WireFailure(std::exception_ptr error) override {
    return RendezvousWireFailure(error);
  }

 private:
  bool mpi_;
  CommonWorldOptions options_;
};

class CloneCommonWorldOp final : public OperatorBase, public CollectiveOp {
 public:
  CloneCommonWorldOp(const OperatorDef& def, Workspace* ws)
      : OperatorBase(def, ws),
        CollectiveOp(*this, ws),
        sync_(GetSingleArgument<bool>("sync", false)) {}

 protected:
  bool RunOnDevice() override { return RunReportingWireFailures(); }
  std::exception_ptr WireFailure(std::exception_ptr error) override {
    return RendezvousWireFailure(error);
  }
  void RunCollective() override {
    const Blob& blob = InputBlob(0);
    C2_ENFORCE(blob.IsType<CommonWorldPtr>() && blob.Get<CommonWorldPtr>(), "input 0 ('",
               debug_def().input(0), "') must be a common world, but holds ", blob.TypeName());
    const std::string& name =
        debug_def().name().empty() ? debug_def().output(0) : debug_def().name();
    OutputBlob(0)->Reset(
        new CommonWorldPtr(CloneCommonWorld(*blob.Get<CommonWorldPtr>(), name, sync_)));
  }

 private:
  bool sync_;
};

class DestroyCommonWorldOp final : public OperatorBase {
 public:
  using OperatorBase::OperatorBase;

 protected:
  bool RunOnDevice() override {
    Blob* blob = OutputBlob(0);
    if (blob->IsEmpty()) return true;
    C2_ENFORCE(blob->IsType<CommonWorldPtr>(), "input 0 ('", debug_def().input(0),
               "') must be a common world, but holds ", blob->TypeName());
    CommonWorldPtr* world = blob->GetMutable<CommonWorldPtr>();
    if (*world) CloseGracefully(**world);
    world->reset();
    return true;
  }
};

}  // namespace

REGISTER_CPU_OPERATOR(CreateCommonWorld_ENGINE_GLOO, CreateCommonWorldOp);
REGISTER_CUDA_OPERATOR(CreateCommonWorld_ENGINE_GLOO, CreateCommonWorldOp);
REGISTER_CPU_OPERATOR(CloneCommonWorld_ENGINE_GLOO, CloneCommonWorldOp);
REGISTER_CUDA_OPERATOR(CloneCommonWorld_ENGINE_GLOO, CloneCommonWorldOp);
REGISTER_CPU_OPERATOR(DestroyCommonWorld_ENGINE_GLOO, DestroyCommonWorldOp);

}  // namespace caffe2
