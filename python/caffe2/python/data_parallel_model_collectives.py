"""The communication ops of data_parallel_model: gradient all-reduce
(single-host Sum tree / NCCL, multi-host Gloo or NCCL with optional
bucketing), master-to-replica broadcasts, parameter synchronization and the
common worlds with their concurrency control.

Multi-host engines: a CPU model uses the rendezvous' engine (GLOO). A GPU
model whose rendezvous goes through a store (kv_handler) uses the NCCL
engine when this build has it (engine 'NCCL' asks for it explicitly): the
common worlds are NCCL worlds with one NCCL rank per local GPU, and one
Allreduce per gradient reduces the GPU buffers of every device of every
host where they are, with no copy to the host. All of its all-reduces share
one world, chained by control inputs (NCCL kernels of communicators used
concurrently can deadlock), and MPI rendezvous keeps GLOO.

Everything here is re-exported by data_parallel_model under the upstream
names; see that module for the overall picture. The common worlds and
their concurrency control are in data_parallel_model_common_worlds, the
master-to-replica broadcasts and parameter syncs in
data_parallel_model_sync; this module re-exports them and holds the
gradient all-reduces and their bucketing.
"""
import logging

from caffe2.proto import caffe2_pb2
from caffe2.python import core, workspace
from caffe2.python.data_parallel_model_common_worlds import (  # noqa: F401
    _DEFAULT_TIMEOUT_SEC,
    CollectivesConcurrencyControl,
    _CollectiveRendezvous,
    _CreateOrCloneCommonWorld,
    _HasNcclEngine,
    _IsMultiHost,
)
from caffe2.python.data_parallel_model_graph import _IsGPUBlob
from caffe2.python.data_parallel_model_sync import (  # noqa: F401
    AddBlobSync,
    AddDistributedBlobSync,
    _Broadcast,
    _BroadcastComputedParams,
    _BroadcastComputedParamsDistributed,
    _BroadcastComputedParamsSingleHost,
    _BroadcastHostBlobsOverNccl,
    _Group,
    _SyncAllParams,
    _SyncAllParamsDistributed,
    _SyncAllParamsSingleHost,
)

log = logging.getLogger("data_parallel_model")

# Gloo Allreduce reduces float and float16 only.
_BUCKETABLE_TYPES = (caffe2_pb2.TensorProto.FLOAT, caffe2_pb2.TensorProto.FLOAT16)
_DTYPE_BYTES = {caffe2_pb2.TensorProto.FLOAT: 4, caffe2_pb2.TensorProto.FLOAT16: 2}


def _PeerAccessPattern(model):
    """The GPU peer-access matrix, or None when every pair counts as
    connected (CPU model, or no CUDA runtime to ask)."""
    if model._device_type != caffe2_pb2.CUDA:
        return None
    pattern = workspace.GetCudaPeerAccessPattern()
    if pattern is None or pattern.size == 0:
        return None
    return pattern


def _AllReduce(devices, model, net, param, use_nccl=False, control_input=None):
    """Single-host all-reduce of one dense blob over `devices`: NCCL, or
    a tree of Sum ops named 'dpm' followed by a broadcast."""
    blobs_group = _Group(model, param)
    if model._device_type == caffe2_pb2.CUDA and use_nccl:
        net.NCCLAllreduce(blobs_group, blobs_group, control_input=control_input)
        return

    p2p_access_pattern = _PeerAccessPattern(model)

    def sumN(*dev_indices):
        """Sums the blobs at positions dev_indices into the first one."""
        sum_devices = [model._devices[idx] for idx in dev_indices]
        blobs = [blobs_group[idx] for idx in dev_indices]
        device_opt = core.DeviceOption(model._device_type, sum_devices[0])
        with core.DeviceScope(device_opt):
            for i, peer in enumerate(sum_devices):
                if i == 0:
                    continue
                if p2p_access_pattern is not None and not p2p_access_pattern[sum_devices[0], peer]:
                    blobs[i] = net.Copy(
                        blobs[i], "gpu_{}/{}_gpu{}_copy".format(sum_devices[0], param, peer)
                    )
            net.Sum(blobs, [blobs[0]], name="dpm")

    if len(devices) == 16:
        for j in range(8):
            sumN(j * 2, j * 2 + 1)
        for j in range(4):
            sumN(j * 4, j * 4 + 2)
        for j in range(2):
            sumN(j * 8, j * 8 + 4)
        sumN(0, 8)
    elif len(devices) == 8:
        for j in range(4):
            sumN(j * 2, j * 2 + 1)
        for j in range(2):
            sumN(j * 4, j * 4 + 2)
        sumN(0, 4)
    elif len(devices) == 4:
        sumN(0, 1)
        sumN(2, 3)
        sumN(0, 2)
    else:
        sumN(*range(len(devices)))
    _Broadcast(devices, model, net, param)


def _AllReduceBlobs(
    blob_names,
    devices,
    model,
    net,
    rendezvous,
    use_nccl,
    max_concurrent_distributed_ops,
    bucket_size_mb=None,
):
    """Sums every blob of `blob_names` over all devices (and hosts); each
    device ends with the total."""
    if not _IsMultiHost(rendezvous):
        _AllReduceBlobsSingleHost(blob_names, devices, model, net, use_nccl)
    else:
        _AllReduceBlobsDistributed(
            blob_names,
            devices,
            model,
            net,
            rendezvous,
            max_concurrent_distributed_ops,
            bucket_size_mb=bucket_size_mb,
        )


def _AllReduceBlobsSingleHost(blob_names, devices, model, net, use_nccl):
    if len(devices) == 1:
        return
    master_device_opt = core.DeviceOption(model._device_type, devices[0])
    last_out = None
    concatenated_idx = set()

    for blob_name in blob_names:
        blobs_group = _Group(model, blob_name)
        if len(blobs_group) == 1:
            continue  # not data parallel
        assert len(blobs_group) == len(
            devices
        ), "Each device from {}, should have a copy of {}.".format(devices, blob_name)

        if _IsGPUBlob(model, blob_name):
            with core.DeviceScope(master_device_opt):
                if not isinstance(blobs_group[0], core.GradientSlice):
                    _AllReduce(devices, model, net, blob_name, use_nccl, last_out)
                    # Serializes the NCCL calls.
                    last_out = blobs_group[0]
                else:
                    _AllGatherGradientSlices(
                        model, net, blob_name, blobs_group, devices, concatenated_idx
                    )
        else:
            assert not isinstance(
                blobs_group[0], core.GradientSlice
            ), "Synchronizing gradient slices not supported"
            with core.DeviceScope(core.DeviceOption(caffe2_pb2.CPU)):
                net.Sum(blobs_group, [blobs_group[0]])
                if not model._shared_model:
                    _Broadcast(devices, model, net, blob_name)


def _AllGatherGradientSlices(model, net, blob_name, blobs_group, devices, concatenated_idx):
    """Sparse gradients on GPUs: every device gets the indices and values
    of all devices (Concat on the master, Copy back)."""
    master_ns = "{}_{}".format(model._device_prefix, devices[0])
    skip_idx_concat = any(g.indices in concatenated_idx for g in blobs_group)
    if not skip_idx_concat:
        grad_idx_concat, _ = net.Concat(
            [g.indices for g in blobs_group],
            [
                "{}/{}_index_concat".format(master_ns, blob_name),
                "{}/{}_index_splitinfo".format(master_ns, blob_name),
            ],
            axis=0,
            name="note:data_parallel_model",
        )
        for device, g in model._device_grouped_blobs[blob_name].items():
            with core.DeviceScope(core.DeviceOption(model._device_type, device)):
                net.Copy(grad_idx_concat, g.indices)
                concatenated_idx.add(g.indices)

    grad_val_concat, _ = net.Concat(
        [g.values for g in blobs_group],
        [
            "{}/{}_val_concat".format(master_ns, blob_name),
            "{}/{}_val_splitinfo".format(master_ns, blob_name),
        ],
        axis=0,
        name="note:data_parallel_model",
    )
    for device, g in model._device_grouped_blobs[blob_name].items():
        with core.DeviceScope(core.DeviceOption(model._device_type, device)):
            net.Copy(grad_val_concat, g.values)


def _AllReduceBlobsDistributed(
    blob_names, devices, model, net, rendezvous, max_concurrent_distributed_ops, bucket_size_mb=None
):
    num_workers = model.net.Proto().num_workers
    assert num_workers > 1, "Please specify more than 1 worker"
    rendezvous = _CollectiveRendezvous(model, rendezvous)
    all_reduce_engine = rendezvous["engine"]
    master_device_opt = core.DeviceOption(model._device_type, devices[0])
    if all_reduce_engine == "NCCL":
        # One world, its all-reduces chained into one order on every host.
        max_concurrent_distributed_ops = 1
        for blob_name in blob_names:
            assert _IsGPUBlob(
                model, blob_name
            ), "The NCCL engine reduces GPU blobs; {} is not on a GPU".format(blob_name)

    context = CollectivesConcurrencyControl(
        "allreduce", max_concurrent_distributed_ops, model.param_init_net, rendezvous
    )

    def allreduce(name, blobs, **kwargs):
        with core.DeviceScope(master_device_opt):
            comm_world, control_input = context.get_control_and_context(blobs[0])
            if control_input is not None:
                kwargs["control_input"] = control_input
            net.Allreduce(
                inputs=[comm_world] + blobs,
                outputs=blobs,
                name=name,
                engine=all_reduce_engine,
                status_blob="allreduce_{}_status".format(name),
                **kwargs,
            )

    if all_reduce_engine in ("GLOO", "NCCL"):
        extra = {}
        if all_reduce_engine == "GLOO":
            extra["gpu_direct"] = rendezvous.get("transport", None) == "ibverbs"
        buckets = _PlanBuckets(model, blob_names, bucket_size_mb)
        for bucket in buckets:
            if len(bucket) == 1:
                # One op reduces across the local devices and the hosts.
                allreduce(bucket[0], _Group(model, bucket[0]), **extra)
            else:
                _AllReduceBucket(model, net, devices, bucket, allreduce, extra)
        return

    nccl_control_blob = None
    for blob_name in blob_names:
        master_blob = model._device_grouped_blobs[blob_name][devices[0]]
        blobs_group = _Group(model, blob_name)
        assert master_blob in blobs_group
        # NCCLReduce cannot work in place, hence the temporary blob.
        reduced_blob = str(master_blob) + "_red"
        with core.DeviceScope(master_device_opt):
            model.ConstantFill(master_blob, reduced_blob, value=0.0)
            net.NCCLAllreduce(
                blobs_group,
                blobs_group,
                **({"control_input": nccl_control_blob} if nccl_control_blob is not None else {}),
            )
            nccl_control_blob = blobs_group[0]
            net.Copy(master_blob, reduced_blob)
        allreduce(blob_name, [core.BlobReference(reduced_blob)])
        with core.DeviceScope(master_device_opt):
            net.Copy(reduced_blob, master_blob)
        _Broadcast(devices, model, net, blob_name)


def _GradientSizes(model, blob_names):
    """{group name: (nbytes, dtype)} for the dense gradients whose shape
    and type follow from param_init_net (a gradient is shaped like its
    parameter)."""
    try:
        shapes, types = workspace.InferShapesAndTypes([model.param_init_net], {})
    except Exception as e:  # an op without shape inference
        log.warning("Gradient bucketing off: cannot infer the parameter " "shapes ({})".format(e))
        return {}
    grad_to_param = {
        str(g): str(p)
        for p, g in model.param_to_grad.items()
        if not isinstance(g, core.GradientSlice)
    }
    sizes = {}
    master = model._devices[0]
    for name in blob_names:
        grad = model._device_grouped_blobs[name][master]
        if isinstance(grad, core.GradientSlice):
            continue
        param = grad_to_param.get(str(grad))
        if param not in shapes or types.get(param) not in _BUCKETABLE_TYPES:
            continue
        numel = 1
        for d in shapes[param]:
            numel *= d
        sizes[name] = (numel * _DTYPE_BYTES[types[param]], types[param])
    return sizes


def _PlanBuckets(model, blob_names, bucket_size_mb):
    """Splits `blob_names` (kept in order) into buckets: runs of
    consecutive dense gradients of one dtype, each under bucket_size_mb
    MiB in total. Gradients of unknown size, sparse ones and those of
    bucket size or more stay alone. None or 0 disables bucketing."""
    if not bucket_size_mb:
        return [[name] for name in blob_names]
    limit = float(bucket_size_mb) * (1 << 20)
    sizes = _GradientSizes(model, blob_names)
    buckets, current, current_bytes, current_type = [], [], 0, None

    def close():
        if current:
            buckets.append(list(current))
        del current[:]

    for name in blob_names:
        if name not in sizes or sizes[name][0] >= limit:
            close()
            buckets.append([name])
            continue
        nbytes, dtype = sizes[name]
        if current and (current_bytes + nbytes > limit or dtype != current_type):
            close()
        if not current:
            current_bytes, current_type = 0, dtype
        current.append(name)
        current_bytes += nbytes
    close()
    return buckets


def _AllReduceBucket(model, net, devices, bucket, allreduce, extra):
    """One Allreduce for several gradients: per device FlattenDenseTensors
    into `<prefix>_<d>/dpm_bucket_<i>` (a buffer of constant size, so its
    storage and pointer stay the same every iteration), the Allreduce on
    the buffers, then UnflattenDenseTensors back into the gradients."""
    if not hasattr(model, "_bucket_buffers"):
        model._bucket_buffers = []
    index = len(model._bucket_buffers) // len(devices)
    bucket_name = "dpm_bucket_{}".format(index)
    buffers = []
    for device in devices:
        grads = [model._device_grouped_blobs[name][device] for name in bucket]
        with core.DeviceScope(core.DeviceOption(model._device_type, device)):
            buffer = net.FlattenDenseTensors(
                grads, "{}_{}/{}".format(model._device_prefix, device, bucket_name)
            )
        buffers.append(buffer)
    model._bucket_buffers.extend(buffers)
    allreduce(bucket_name, buffers, **extra)
    for device, buffer in zip(devices, buffers):
        grads = [model._device_grouped_blobs[name][device] for name in bucket]
        with core.DeviceScope(core.DeviceOption(model._device_type, device)):
            net.UnflattenDenseTensors([buffer] + grads, grads)
