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
names; see that module for the overall picture.
"""
import logging

from caffe2.proto import caffe2_pb2
from caffe2.python import core, workspace
from caffe2.python.data_parallel_model_graph import _IsGPUBlob

log = logging.getLogger("data_parallel_model")

_DEFAULT_TIMEOUT_SEC = 30

# Gloo Allreduce reduces float and float16 only.
_BUCKETABLE_TYPES = (caffe2_pb2.TensorProto.FLOAT,
                     caffe2_pb2.TensorProto.FLOAT16)
_DTYPE_BYTES = {caffe2_pb2.TensorProto.FLOAT: 4,
                caffe2_pb2.TensorProto.FLOAT16: 2}


def _IsMultiHost(rendezvous):
    return rendezvous is not None and rendezvous['num_shards'] > 1


def _HasNcclEngine():
    return core.IsOperatorWithEngine('Allreduce', 'NCCL')


def _CollectiveRendezvous(model, rendezvous):
    """The rendezvous the cross-host collectives of `model` use: for a GPU
    model with a store (and engine GLOO in a build with the NCCL engine, or
    engine NCCL) a copy with engine 'NCCL' and the local GPUs under 'gpus';
    otherwise `rendezvous` itself."""
    if rendezvous is None or model._device_type != caffe2_pb2.CUDA:
        return rendezvous
    engine = rendezvous['engine']
    auto = engine == 'GLOO' and rendezvous.get('kv_handler') and \
        not rendezvous.get('mpi_rendezvous') and _HasNcclEngine()
    if engine != 'NCCL' and not auto:
        return rendezvous
    return dict(rendezvous, engine='NCCL', gpus=list(model._devices))


def _Group(model, blob_name):
    """The per-device copies of a blob, in device order."""
    return list(model._device_grouped_blobs[blob_name].values())


def _CreateOrCloneCommonWorld(net, common_world_blob, rendezvous, name=None,
                              status_blob=None, timeout_sec=None):
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
        if op.type != "CreateCommonWorld" or \
                op.engine != rendezvous['engine']:
            continue
        op_timeout_ms = -1
        for arg in op.arg:
            if arg.name == 'timeout_ms':
                op_timeout_ms = arg.i
                break
        if op_timeout_ms == timeout_ms:
            existing = op.output[0]
            break

    if name is None:
        name = "{}_op".format(common_world_blob)
    kwargs = {}
    if status_blob is not None:
        kwargs['status_blob'] = status_blob

    if existing is not None:
        return net.CloneCommonWorld(
            [existing], common_world_blob, name=name,
            engine=rendezvous['engine'], **kwargs)

    for key in ('transport', 'interface', 'mpi_rendezvous', 'gpus'):
        if key in rendezvous:
            kwargs[key] = rendezvous[key]
    return net.CreateCommonWorld(
        rendezvous['kv_handler'] or [],
        common_world_blob,
        name=name,
        size=rendezvous['num_shards'],
        rank=rendezvous['shard_id'],
        engine=rendezvous['engine'],
        timeout_ms=timeout_ms,
        **kwargs)


class CollectivesConcurrencyControl(object):
    """Up to `max_concurrent_context` common worlds ("<name>_<slot>_cw",
    made lazily in param_init_net); collective i uses slot
    i % max_concurrent_context and gets as control input the blob of the
    previous collective in that slot, so collectives sharing a world run
    in order."""

    def __init__(self, name, max_concurrent_context, param_init_net,
                 rendezvous):
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
                status_blob="create_{}_cw_{}_status".format(
                    self.name, current_slot),
            )
            self.common_worlds.append(common_world)
            self.control_inputs.append(control_output_blob)
        else:
            common_world = self.common_worlds[current_slot]
            control_input = self.control_inputs[current_slot]
            self.control_inputs[current_slot] = control_output_blob
        self.counter += 1
        return common_world, control_input


def _Broadcast(devices, model, net, param, use_nccl=False):
    """Copies the master device's copy of `param` to the other devices
    (each Copy on the destination device), or one NCCLBroadcast. A shared
    model's blob that exists on the master device alone (a parameter and its
    optimizer state, read there by every device) needs no copy."""
    master_dev = devices[0]
    if model._shared_model and list(model._device_grouped_blobs[param]) == [master_dev]:
        return
    if use_nccl and _IsGPUBlob(model, param):
        with core.DeviceScope(
                core.DeviceOption(model._device_type, master_dev)):
            # root is the root rank (position in the list), not a device id.
            group = _Group(model, param)
            net.NCCLBroadcast(group, group, root=0)
            return

    for dev_idx in devices[1:]:
        if _IsGPUBlob(model, param):
            device_opt = core.DeviceOption(caffe2_pb2.CUDA, dev_idx)
        else:
            device_opt = core.DeviceOption(caffe2_pb2.CPU, 0)
        with core.DeviceScope(device_opt):
            net.Copy(model._device_grouped_blobs[param][master_dev],
                     model._device_grouped_blobs[param][dev_idx])


def _PeerAccessPattern(model):
    """The GPU peer-access matrix, or None when every pair counts as
    connected (CPU model, or no CUDA runtime to ask)."""
    if model._device_type != caffe2_pb2.CUDA:
        return None
    pattern = workspace.GetCudaPeerAccessPattern()
    if pattern is None or pattern.size == 0:
        return None
    return pattern


def _AllReduce(devices, model, net, param, use_nccl=False,
               control_input=None):
    """Single-host all-reduce of one dense blob over `devices`: NCCL, or
    a tree of Sum ops named 'dpm' followed by a broadcast."""
    blobs_group = _Group(model, param)
    if model._device_type == caffe2_pb2.CUDA and use_nccl:
        net.NCCLAllreduce(blobs_group, blobs_group,
                          control_input=control_input)
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
                if p2p_access_pattern is not None and \
                        not p2p_access_pattern[sum_devices[0], peer]:
                    blobs[i] = net.Copy(
                        blobs[i],
                        'gpu_{}/{}_gpu{}_copy'.format(
                            sum_devices[0], param, peer))
            net.Sum(blobs, [blobs[0]], name='dpm')

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


def _AllReduceBlobs(blob_names, devices, model, net, rendezvous, use_nccl,
                    max_concurrent_distributed_ops, bucket_size_mb=None):
    """Sums every blob of `blob_names` over all devices (and hosts); each
    device ends with the total."""
    if not _IsMultiHost(rendezvous):
        _AllReduceBlobsSingleHost(blob_names, devices, model, net, use_nccl)
    else:
        _AllReduceBlobsDistributed(
            blob_names, devices, model, net, rendezvous,
            max_concurrent_distributed_ops, bucket_size_mb=bucket_size_mb)


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
        assert len(blobs_group) == len(devices), \
            "Each device from {}, should have a copy of {}.".format(
                devices, blob_name)

        if _IsGPUBlob(model, blob_name):
            with core.DeviceScope(master_device_opt):
                if not isinstance(blobs_group[0], core.GradientSlice):
                    _AllReduce(devices, model, net, blob_name, use_nccl,
                               last_out)
                    # Serializes the NCCL calls.
                    last_out = blobs_group[0]
                else:
                    _AllGatherGradientSlices(
                        model, net, blob_name, blobs_group, devices,
                        concatenated_idx)
        else:
            assert not isinstance(blobs_group[0], core.GradientSlice), \
                "Synchronizing gradient slices not supported"
            with core.DeviceScope(core.DeviceOption(caffe2_pb2.CPU)):
                net.Sum(blobs_group, [blobs_group[0]])
                if not model._shared_model:
                    _Broadcast(devices, model, net, blob_name)


def _AllGatherGradientSlices(model, net, blob_name, blobs_group, devices,
                             concatenated_idx):
    """Sparse gradients on GPUs: every device gets the indices and values
    of all devices (Concat on the master, Copy back)."""
    master_ns = "{}_{}".format(model._device_prefix, devices[0])
    skip_idx_concat = any(g.indices in concatenated_idx for g in blobs_group)
    if not skip_idx_concat:
        grad_idx_concat, _ = net.Concat(
            [g.indices for g in blobs_group],
            ["{}/{}_index_concat".format(master_ns, blob_name),
             "{}/{}_index_splitinfo".format(master_ns, blob_name)],
            axis=0, name="note:data_parallel_model")
        for device, g in model._device_grouped_blobs[blob_name].items():
            with core.DeviceScope(
                    core.DeviceOption(model._device_type, device)):
                net.Copy(grad_idx_concat, g.indices)
                concatenated_idx.add(g.indices)

    grad_val_concat, _ = net.Concat(
        [g.values for g in blobs_group],
        ["{}/{}_val_concat".format(master_ns, blob_name),
         "{}/{}_val_splitinfo".format(master_ns, blob_name)],
        axis=0, name="note:data_parallel_model")
    for device, g in model._device_grouped_blobs[blob_name].items():
        with core.DeviceScope(core.DeviceOption(model._device_type, device)):
            net.Copy(grad_val_concat, g.values)


def _AllReduceBlobsDistributed(blob_names, devices, model, net, rendezvous,
                               max_concurrent_distributed_ops,
                               bucket_size_mb=None):
    num_workers = model.net.Proto().num_workers
    assert num_workers > 1, "Please specify more than 1 worker"
    rendezvous = _CollectiveRendezvous(model, rendezvous)
    all_reduce_engine = rendezvous['engine']
    master_device_opt = core.DeviceOption(model._device_type, devices[0])
    if all_reduce_engine == 'NCCL':
        # One world, its all-reduces chained into one order on every host.
        max_concurrent_distributed_ops = 1
        for blob_name in blob_names:
            assert _IsGPUBlob(model, blob_name), \
                "The NCCL engine reduces GPU blobs; {} is not on a GPU".format(
                    blob_name)

    context = CollectivesConcurrencyControl(
        "allreduce", max_concurrent_distributed_ops, model.param_init_net,
        rendezvous)

    def allreduce(name, blobs, **kwargs):
        with core.DeviceScope(master_device_opt):
            comm_world, control_input = \
                context.get_control_and_context(blobs[0])
            if control_input is not None:
                kwargs['control_input'] = control_input
            net.Allreduce(
                inputs=[comm_world] + blobs,
                outputs=blobs,
                name=name,
                engine=all_reduce_engine,
                status_blob="allreduce_{}_status".format(name),
                **kwargs)

    if all_reduce_engine in ('GLOO', 'NCCL'):
        extra = {}
        if all_reduce_engine == 'GLOO':
            extra['gpu_direct'] = rendezvous.get("transport", None) == "ibverbs"
        buckets = _PlanBuckets(model, blob_names, bucket_size_mb)
        for bucket in buckets:
            if len(bucket) == 1:
                # One op reduces across the local devices and the hosts.
                allreduce(bucket[0], _Group(model, bucket[0]), **extra)
            else:
                _AllReduceBucket(model, net, devices, bucket, allreduce,
                                 extra)
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
            net.NCCLAllreduce(blobs_group, blobs_group,
                              **({'control_input': nccl_control_blob}
                                 if nccl_control_blob is not None else {}))
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
        shapes, types = workspace.InferShapesAndTypes(
            [model.param_init_net], {})
    except Exception as e:  # an op without shape inference
        log.warning("Gradient bucketing off: cannot infer the parameter "
                    "shapes ({})".format(e))
        return {}
    grad_to_param = {str(g): str(p) for p, g in model.param_to_grad.items()
                     if not isinstance(g, core.GradientSlice)}
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
        if current and (current_bytes + nbytes > limit or
                        dtype != current_type):
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
    if not hasattr(model, '_bucket_buffers'):
        model._bucket_buffers = []
    index = len(model._bucket_buffers) // len(devices)
    bucket_name = "dpm_bucket_{}".format(index)
    buffers = []
    for device in devices:
        grads = [model._device_grouped_blobs[name][device] for name in bucket]
        with core.DeviceScope(core.DeviceOption(model._device_type, device)):
            buffer = net.FlattenDenseTensors(
                grads, "{}_{}/{}".format(model._device_prefix, device,
                                         bucket_name))
        buffers.append(buffer)
    model._bucket_buffers.extend(buffers)
    allreduce(bucket_name, buffers, **extra)
    for device, buffer in zip(devices, buffers):
        grads = [model._device_grouped_blobs[name][device] for name in bucket]
        with core.DeviceScope(core.DeviceOption(model._device_type, device)):
            net.UnflattenDenseTensors([buffer] + grads, grads)


def _BroadcastComputedParams(devices, model, rendezvous, use_nccl=False):
    """Copies the computed params (BN running stats) of device 0 to the
    others every iteration; across hosts they are not synchronized."""
    if rendezvous is None:
        _BroadcastComputedParamsSingleHost(devices, model, use_nccl)
    else:
        _BroadcastComputedParamsDistributed(devices, model, rendezvous,
                                            use_nccl)


def _BroadcastComputedParamsDistributed(devices, model, rendezvous,
                                        use_nccl=False):
    _BroadcastComputedParamsSingleHost(devices, model, use_nccl)
    log.warning("Distributed broadcast of computed params is not "
                "implemented yet")


def _BroadcastComputedParamsSingleHost(devices, model, use_nccl=False):
    if len(devices) == 1:
        return
    for param_name in model._computed_param_names:
        # Copy, not average: NCCLAllreduce here is prone to deadlocks.
        _Broadcast(devices, model, model.net, param_name, use_nccl)


def _SyncAllParams(devices, model, init_net, net, rendezvous,
                   unique_param_names, max_concurrent_distributed_ops=4):
    """Appends to `net` the broadcast of every named blob from the master
    device (and, multi-host, from rank 0); common worlds go to
    `init_net`."""
    if not _IsMultiHost(rendezvous):
        _SyncAllParamsSingleHost(devices, model, net, unique_param_names)
    else:
        _SyncAllParamsDistributed(
            devices, model, init_net, net, rendezvous, unique_param_names,
            max_concurrent_distributed_ops)


def _SyncAllParamsSingleHost(devices, model, net, unique_param_names):
    for param in sorted(unique_param_names):
        _Broadcast(devices, model, net, param)


def _SyncAllParamsDistributed(devices, model, init_net, net, rendezvous,
                              unique_param_names,
                              max_concurrent_distributed_ops):
    assert rendezvous['num_shards'] > 1
    rendezvous = _CollectiveRendezvous(model, rendezvous)
    gpu_device_opt = core.DeviceOption(model._device_type, devices[0])
    cpu_device_opt = core.DeviceOption(caffe2_pb2.CPU)

    if model._broadcast_context is None:
        model._broadcast_context = CollectivesConcurrencyControl(
            "broadcast", max_concurrent_distributed_ops, init_net,
            rendezvous)
    context = model._broadcast_context

    for param_name in sorted(unique_param_names):
        master_param = model._device_grouped_blobs[param_name][devices[0]]
        params_group = _Group(model, param_name)

        def broadcast(params):
            comm_world, control_input = context.get_control_and_context(
                params)
            kwargs = {}
            if control_input is not None:
                kwargs['control_input'] = control_input
            net.Broadcast(
                inputs=[comm_world] + params,
                outputs=params,
                name=param_name,
                engine=rendezvous['engine'],
                status_blob="broadcast_{}_status".format(str(param_name)),
                **kwargs)

        device_opt = gpu_device_opt if _IsGPUBlob(model, param_name) \
            else cpu_device_opt

        if rendezvous['engine'] == 'GLOO':
            with core.DeviceScope(device_opt):
                broadcast(params_group)
        elif rendezvous['engine'] == 'NCCL':
            if _IsGPUBlob(model, param_name):
                with core.DeviceScope(gpu_device_opt):
                    broadcast(params_group)
            else:
                _BroadcastHostBlobsOverNccl(net, devices, params_group,
                                            broadcast)
        else:
            with core.DeviceScope(device_opt):
                param_cpu = net.CopyGPUToCPU(
                    master_param, str(master_param) + "cpu")
            with core.DeviceScope(cpu_device_opt):
                broadcast([param_cpu])
            with core.DeviceScope(device_opt):
                net.CopyCPUToGPU(param_cpu, master_param)
            _Broadcast(devices, model, net, param_name)


def _BroadcastHostBlobsOverNccl(net, devices, blobs, broadcast):
    """The NCCL engine carries GPU buffers: host blobs of a GPU model (one
    per device) go through a copy on their device's GPU
    ("<blob>_nccl_stage") and back."""
    staged = []
    for device, blob in zip(devices, blobs):
        with core.DeviceScope(core.DeviceOption(caffe2_pb2.CUDA, device)):
            staged.append(net.CopyCPUToGPU(
                blob, "{}_nccl_stage".format(blob)))
    with core.DeviceScope(core.DeviceOption(caffe2_pb2.CUDA, devices[0])):
        broadcast(staged)
    for device, blob, stage in zip(devices, blobs, staged):
        with core.DeviceScope(core.DeviceOption(caffe2_pb2.CUDA, device)):
            net.CopyGPUToCPU(stage, blob)


def AddBlobSync(model, blobs, net=None):
    """Broadcasts the named (unprefixed) blobs from the master device (and
    rank 0) to all devices (and hosts), in `net` (default model.net)."""
    if len(blobs) == 0:
        return
    net = model.net if net is None else net
    for b in blobs:
        assert not b.startswith(model._device_prefix), \
            "Provide unprefixed blob name: {}".format(b)
        model._device_grouped_blobs[b] = {
            d: core.BlobReference("{}_{}/{}".format(
                model._device_prefix, d, b))
            for d in model._devices}
    _SyncAllParams(model._devices, model, model.param_init_net, net,
                   model._rendezvous, set(blobs))


def AddDistributedBlobSync(model, blobs):
    """Sums the given blobs across hosts (not across local devices)."""
    if model._rendezvous is None:
        return
    synth_name = "_".join([str(b) for b in blobs])
    comm_world = _CreateOrCloneCommonWorld(
        model.param_init_net,
        "blob_sync_cw_" + synth_name,
        rendezvous=model._rendezvous,
        status_blob="create_blob_sync_cw_{}_cw_status".format(synth_name),
    )
    model.net.Allreduce(
        inputs=[comm_world] + list(blobs),
        outputs=list(blobs),
        engine=model._rendezvous['engine'],
        status_blob="blob_sync_allred_{}_status".format(synth_name),
    )
