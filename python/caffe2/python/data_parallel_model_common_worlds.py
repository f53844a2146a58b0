"""The common worlds of data_parallel_model's cross-host collectives: which
rendezvous (and engine: GLOO, or NCCL for GPU models with a store) the
collectives use, creating or cloning a CreateCommonWorld in a net, and
CollectivesConcurrencyControl, which spreads collectives over a bounded
number of worlds and chains the ones sharing a world by control inputs.

Re-exported by data_parallel_model_collectives (and, from there, by
data_parallel_model) under the upstream names; see
data_parallel_model_collectives for how the engines are chosen.
"""
from caffe2.proto import caffe2_pb2
from caffe2.python import core

_DEFAULT_TIMEOUT_SEC = 30


def _IsMultiHost(rendezvous):
    return rendezvous is not None and rendezvous["num_shards"] > 1


def _HasNcclEngine():
    return core.IsOperatorWithEngine("Allreduce", "NCCL")


def _CollectiveRendezvous(model, rendezvous):
    """The rendezvous the cross-host collectives of `model` use: for a GPU
    model with a store (and engine GLOO in a build with the NCCL engine, or
    engine NCCL) a copy with engine 'NCCL' and the local GPUs under 'gpus';
    otherwise `rendezvous` itself."""
    if rendezvous is None or model._device_type != caffe2_pb2.CUDA:
        return rendezvous
    engine = rendezvous["engine"]
    auto = (
        engine == "GLOO"
        and rendezvous.get("kv_handler")
        and not rendezvous.get("mpi_rendezvous")
        and _HasNcclEngine()
    )
    if engine != "NCCL" and not auto:
        return rendezvous
    return dict(rendezvous, engine="NCCL", gpus=list(model._devices))


def _CreateOrCloneCommonWorld(
    net, common_world_blob, rendezvous, name=None, status_blob=None, timeout_sec=None
):
    """A common world in `net`: a CloneCommonWorld of the first
    CreateCommonWorld of `net` with the same timeout and engine, else a
    CreateCommonWorld that rendezvouses through rendezvous['kv_handler']
    (or MPI when it is None). An NCCL rendezvous (_CollectiveRendezvous)
    also passes its 'gpus'."""
    if timeout_sec is None:
        timeout_sec = _DEFAULT_TIMEOUT_SEC
    timeout_ms = timeout_sec * 1000

    existing = None
    for op in net.Proto().op:
        if op.type != "CreateCommonWorld" or op.engine != rendezvous["engine"]:
            continue
        op_timeout_ms = -1
        for arg in op.arg:
            if arg.name == "timeout_ms":
                op_timeout_ms = arg.i
                break
        if op_timeout_ms == timeout_ms:
            existing = op.output[0]
            break

    if name is None:
        name = "{}_op".format(common_world_blob)
    kwargs = {}
    if status_blob is not None:
        kwargs["status_blob"] = status_blob

    if existing is not None:
        return net.CloneCommonWorld(
            [existing], common_world_blob, name=name, engine=rendezvous["engine"], **kwargs
        )

    for key in ("transport", "interface", "mpi_rendezvous", "gpus"):
        if key in rendezvous:
            kwargs[key] = rendezvous[key]
    return net.CreateCommonWorld(
        rendezvous["kv_handler"] or [],
        common_world_blob,
        name=name,
        size=rendezvous["num_shards"],
        rank=rendezvous["shard_id"],
        engine=rendezvous["engine"],
        timeout_ms=timeout_ms,
        **kwargs,
    )


class CollectivesConcurrencyControl(object):
    """Up to `max_concurrent_context` common worlds ("<name>_<slot>_cw",
    made lazily in param_init_net); collective i uses slot
    i % max_concurrent_context and gets as control input the blob of the
    previous collective in that slot, so collectives sharing a world run
    in order."""

    def __init__(self, name, max_concurrent_context, param_init_net, rendezvous):
        self.name = name
        self.param_init_net = param_init_net
        self.max_concurrent_context = max_concurrent_context
        self.counter = 0
        self.common_worlds = []
        self.control_inputs = []
        self.rendezvous = rendezvous

    def get_control_and_context(self, control_output_blob):
        """(common world, control input or None) for the next collective,
        whose output `control_output_blob` the next user of the slot waits
        for."""
        common_world, control_input = None, None
        current_slot = self.counter % self.max_concurrent_context
        if len(self.common_worlds) < self.max_concurrent_context:
            common_world = _CreateOrCloneCommonWorld(
                self.param_init_net,
                "{}_{}_cw".format(self.name, current_slot),
                rendezvous=self.rendezvous,
                status_blob="create_{}_cw_{}_status".format(self.name, current_slot),
            )
            self.common_worlds.append(common_world)
            self.control_inputs.append(control_output_blob)
        else:
            common_world = self.common_worlds[current_slot]
            control_input = self.control_inputs[current_slot]
            self.control_inputs[current_slot] = control_output_blob
        self.counter += 1
        return common_world, control_input
