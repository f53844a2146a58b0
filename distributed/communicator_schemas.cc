// Schemas of the communication ops (ops spec §3.5; upstream operators/communicator_op.cc), and
// their default-engine registrations: these ops exist only under an engine (GLOO; NCCL for CUDA
// buffers when built with NCCL, see distributed/nccl/), so the plain op type runs an op that says
// so.
#include "core/gradient.h"
#include "core/operator.h"
#include "distributed/gloo/gloo_availability.h"

namespace caffe2 {
namespace {

class NoDefaultEngineOp final : public OperatorBase {
 public:
  NoDefaultEngineOp(const OperatorDef& def, Workspace* ws) : OperatorBase(def, ws) {
    C2_THROW(
        "has no default implementation: give it engine='GLOO' (or, on CUDA with an NCCL "
        "build, engine='NCCL')",
        GlooAvailable() ? ""
                        : " (and note that this build has no Gloo: C2_USE_GLOO=OFF or "
                          "libgloo-dev missing at configure time)");
  }

 protected:
  bool RunOnDevice() override { return false; }
};

bool InPlaceAfterWorld(int in, int out) { return in == out + 1; }

}  // namespace

#define C2_COMMUNICATOR_OP(Type)                   \
  REGISTER_CPU_OPERATOR(Type, NoDefaultEngineOp);  \
  REGISTER_CUDA_OPERATOR(Type, NoDefaultEngineOp); \
  REGISTER_GRADIENT(Type, ShouldNotDoGradient)

C2_COMMUNICATOR_OP(CreateCommonWorld);
C2_COMMUNICATOR_OP(CloneCommonWorld);
C2_COMMUNICATOR_OP(DestroyCommonWorld);
C2_COMMUNICATOR_OP(Allreduce);
C2_COMMUNICATOR_OP(Broadcast);
C2_COMMUNICATOR_OP(Barrier);
C2_COMMUNICATOR_OP(Allgather);
C2_COMMUNICATOR_OP(ReduceScatter);
C2_COMMUNICATOR_OP(Reduce);
C2_COMMUNICATOR_OP(SendTensor);
C2_COMMUNICATOR_OP(ReceiveTensor);
#undef C2_COMMUNICATOR_OP

// The model-parallel exchanges (schemas and gradients in model_parallel_schemas.cc): GLOO only.
REGISTER_CPU_OPERATOR(AllgatherBatch, NoDefaultEngineOp);
REGISTER_CPU_OPERATOR(ReduceScatterBatch, NoDefaultEngineOp);
REGISTER_CPU_OPERATOR(ColumnShardsToBatch, NoDefaultEngineOp);
REGISTER_CPU_OPERATOR(BatchToColumnShards, NoDefaultEngineOp);

OPERATOR_SCHEMA(CreateCommonWorld)
    .NumInputs(0, 1)
    .NumOutputs(1)
    .SetDoc(R"DOC(
Joins every rank of a run into a common world. The op's name is the rendezvous namespace: every
shard must create its common worlds with the same names in the same order.
)DOC")
    .Arg("size", "(int) number of ranks (from MPI with mpi_rendezvous)")
    .Arg("rank", "(int) this rank, in [0, size) (from MPI with mpi_rendezvous)")
    .Arg("sync", "(bool, default false) synchronous pairs without busy polling")
    .Arg("transport", "(string, default \"tcp\") \"tcp\" or \"ibverbs\"")
    .Arg("interface", "(string, default \"\") network interface (or ibverbs device) to use")
    .Arg("mpi_rendezvous", "(bool, default false) rank and size from MPI instead of a store")
    .Arg("timeout_ms", "(int, default -1 = 30 s) rendezvous and collective timeout")
    .Arg("status_blob", "(string) blob set to int32 [1] when the rendezvous fails")
    .Arg("gpus",
         "(repeated int) engine NCCL: this process's GPUs, one NCCL rank each "
         "(default: the op's GPU)")
    .Input(0, "kv_handler", "store handler (absent with mpi_rendezvous)")
    .Output(0, "comm_world", "the common world");

OPERATOR_SCHEMA(CloneCommonWorld)
    .NumInputs(1)
    .NumOutputs(1)
    .SetDoc(
        "A new common world with the same ranks, its addresses exchanged over the existing one.")
    .Arg("sync", "(bool, default false) synchronous pairs")
    .Arg("status_blob", "(string) blob set to int32 [1] on failure")
    .Input(0, "existing_comm_world", "the world to clone")
    .Output(0, "comm_world", "the clone");

OPERATOR_SCHEMA(DestroyCommonWorld)
    .NumInputs(1)
    .NumOutputs(1)
    .EnforceInplace({{0, 0}})
    .SetDoc("Closes every connection of the common world.")
    .Input(0, "common_world", "the world to close")
    .Output(0, "common_world", "the same blob, now empty");

OPERATOR_SCHEMA(Allreduce)
    .NumInputs(2, INT_MAX)
    .NumOutputs(1, INT_MAX)
    .NumInputsOutputs([](int in, int out) { return in == out + 1; })
    .EnforceInplace(InPlaceAfterWorld)
    .IdenticalTypeAndShapeOfInput(1)
    .InputsCanCrossDevices()
    .SetDoc("Sums the buffers over every local input and every rank; every buffer gets the total.")
    .Arg("status_blob", "(string) blob set to int32 [1] on failure")
    .Arg("gpu_direct", "(bool, default false) CUDA only: reduce in GPU memory")
    .Arg("algorithm",
         "(string, default \"auto\") GLOO engine: \"halving_doubling\" (latency-bound sizes), "
         "\"ring_chunked\" (bandwidth-bound sizes) or \"auto\" (the ring from 1 MiB per buffer)")
    .Input(0, "comm_world", "the common world")
    .Input(1, "X", "buffers (float or float16, all of one size), reduced in place")
    .Output(0, "X", "the same buffers");

OPERATOR_SCHEMA(Broadcast)
    .NumInputs(2, INT_MAX)
    .NumOutputs(1, INT_MAX)
    .NumInputsOutputs([](int in, int out) { return in == out + 1; })
    .EnforceInplace(InPlaceAfterWorld)
    .IdenticalTypeAndShapeOfInput(1)
    .InputsCanCrossDevices()
    .SetDoc("Copies the root rank's first buffer into every buffer on every rank.")
    .Arg("root", "(int, default 0) the rank that sends")
    .Arg("status_blob", "(string) blob set to int32 [1] on failure")
    .Input(0, "comm_world", "the common world")
    .Input(1, "X", "buffers (float, float16, int32, int64), overwritten in place")
    .Output(0, "X", "the same buffers");

OPERATOR_SCHEMA(Barrier)
    .NumInputs(1)
    .NumOutputs(0)
    .SetDoc("Returns once every rank has reached the barrier.")
    .Arg("status_blob", "(string) blob set to int32 [1] on failure")
    .Input(0, "comm_world", "the common world");

OPERATOR_SCHEMA(Allgather)
    .NumInputs(2, INT_MAX)
    .NumOutputs(1)
    .SetDoc("Concatenates every rank's buffers (rank-major, then input order) into a 1-D output.")
    .Arg("status_blob", "(string) blob set to int32 [1] on failure")
    .Input(0, "comm_world", "the common world")
    .Input(1, "X", "buffers of one size and dtype")
    .Output(0, "Y", "1-D, k * size(X) * world size elements");

OPERATOR_SCHEMA(ReduceScatter)
    .NumInputs(3, INT_MAX)
    .NumOutputs(2, INT_MAX)
    .NumInputsOutputs([](int in, int out) { return in == out + 1; })
    .EnforceInplace(InPlaceAfterWorld)
    .SetDoc(
        "Sums the buffers over all ranks and leaves rank r its recv_counts[r] elements of the "
        "result at the start of each buffer.")
    .Arg("status_blob", "(string) blob set to int32 [1] on failure")
    .Input(0, "comm_world", "the common world")
    .Input(1, "X", "buffers (float or float16), reduced in place; the last input is recv_counts")
    .Output(0, "X", "the same buffers, then recv_counts");

OPERATOR_SCHEMA(Reduce)
    .NumInputs(2)
    .NumOutputs(1)
    .SetDoc("Reduces to the root rank (no engine implements it in this build).")
    .Arg("root", "(int, default 0) the receiving rank")
    .Input(0, "comm_world", "the common world")
    .Input(1, "X", "the buffer")
    .Output(0, "Y", "the result on the root");

OPERATOR_SCHEMA(SendTensor)
    .NumInputs(2, 4)
    .NumOutputs(0)
    .SetDoc("Sends a tensor to another rank (no engine implements it in this build).")
    .Arg("dst", "(int) the receiving rank")
    .Arg("tag", "(int) the message tag")
    .Arg("raw_buffer", "(bool) send the raw buffer without shape")
    .Input(0, "comm_world", "the common world")
    .Input(1, "X", "the tensor to send");

OPERATOR_SCHEMA(ReceiveTensor)
    .NumInputs(2, 4)
    .NumOutputs(3)
    .SetDoc("Receives a tensor from another rank (no engine implements it in this build).")
    .Arg("src", "(int) the sending rank")
    .Arg("tag", "(int) the message tag")
    .Arg("raw_buffer", "(bool) receive into the existing buffer")
    .Input(0, "comm_world", "the common world")
    .Input(1, "Y", "the buffer")
    .Output(0, "Y", "the received tensor")
    .Output(1, "src", "the sending rank")
    .Output(2, "tag", "the tag");

}  // namespace caffe2
