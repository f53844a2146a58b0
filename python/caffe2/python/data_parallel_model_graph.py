"""Net and blob bookkeeping of data_parallel_model: grouping the per-device
copies of a blob, device inference, the blobs to synchronize, the
cross-device checks, the CPU multi-device batch normalization rewrite,
shared-model pruning and the memory passes.

Everything here is re-exported by data_parallel_model under the upstream
names; see that module for the overall picture.
"""
import logging
from collections import Counter, OrderedDict

from caffe2.proto import caffe2_pb2
from caffe2.python import core, memonger, scope, utils, workspace

log = logging.getLogger("data_parallel_model")


def stripBlobName(param):
    """'gpu_0/conv1_w' -> 'conv1_w' (text after the first '/'); a
    GradientSlice gives '<indices>:<values>'."""
    if isinstance(param, core.GradientSlice):
        return stripBlobName(param.indices) + ":" + stripBlobName(param.values)
    name = str(param)
    return name[name.index(scope._NAMESCOPE_SEPARATOR) + 1 :]


def _SetDeviceType(model, devices, cpu_device, shared_model):
    if not cpu_device:
        for gpu in devices:
            if gpu >= workspace.NumCudaDevices():
                log.warning(
                    "** Only {} GPUs available, GPUs {} requested".format(
                        workspace.NumCudaDevices(), devices
                    )
                )
                break
        model._device_type = caffe2_pb2.CUDA
        model._device_prefix = "gpu"
        model._shared_model = False
        assert shared_model is False, "Shared model only supported on CPU"
        return "GPU"
    model._device_type = caffe2_pb2.CPU
    model._device_prefix = "cpu"
    model._shared_model = shared_model
    return "CPU"


def _ForEachDevice(devices, f, device_type, device_prefix, scoped=False, *args, **kwargs):
    """Calls f(device, ...) under each device's DeviceScope (and NameScope
    '<prefix>_<id>' when scoped)."""
    for device in devices:
        with core.DeviceScope(core.DeviceOption(device_type, device)):
            if scoped:
                with core.NameScope("{}_{}".format(device_prefix, device)):
                    f(device, *args, **kwargs)
            else:
                f(device, *args, **kwargs)


def _AssertNoDeviceScope():
    current = scope.CurrentDeviceScope()
    assert (
        current is None or current.device_type == caffe2_pb2.CPU
    ), "Parallelize must be called without device-scope, " "device scope was: {}".format(current)


def _DevicePrefix(model, device):
    return "{}_{}/".format(model._device_prefix, device)


def _DeviceIdOf(model, blob):
    """The device id in '<prefix>_<id>/...', checked against the prefix."""
    namescope = blob.GetNameScope()
    device = int(namescope.split("_")[1].split("/")[0])
    assert (
        _DevicePrefix(model, device) in namescope
    ), "Blob {} expected to have namescope '{}_{}'".format(str(blob), model._device_prefix, device)
    return device


def _GroupByDevice(model, devices, params, non_data_params):
    """OrderedDict {stripped name: {device id: blob}} in the order of
    `params`, skipping the first len(non_data_params) entries (blobs that
    existed before Parallelize and are not data parallel)."""
    grouped = OrderedDict()
    params = params[len(non_data_params) :]
    for p in params:
        assert isinstance(
            p, (core.BlobReference, core.GradientSlice)
        ), "Param {} is not BlobReference or GradientSlice".format(p)
        name = stripBlobName(p)
        if isinstance(p, core.BlobReference):
            device = _DeviceIdOf(model, p)
        else:
            device = _DeviceIdOf(model, p.indices)
            assert (
                _DeviceIdOf(model, p.values) == device
            ), "Indices {} and values {} are on different devices".format(p.indices, p.values)
        grouped.setdefault(name, {})[device] = p
    return grouped


def _ValidateParams(params):
    counts = Counter(str(p) for p in params)
    dupes = sorted(n for n, c in counts.items() if c > 1)
    assert not dupes, "Duplicate entries in params: {}".format(dupes)


def _InferBlobDevice(model):
    """model._blob_to_device: {blob: DeviceOption of the first op (init
    net first) reading or writing it}; Iter counters live on the CPU."""
    mapping = {}

    def map_ops(proto):
        for op in proto.op:
            device_option = op.device_option
            if op.type == "Iter":
                device_option = caffe2_pb2.DeviceOption()
                device_option.device_type = caffe2_pb2.CPU
            for b in list(op.input) + list(op.output):
                if b not in mapping:
                    mapping[b] = device_option
            if op.type.startswith("RecurrentNetwork"):
                for arg in op.arg:
                    if arg.name.endswith("step_net"):
                        map_ops(arg.n)

    map_ops(model.param_init_net.Proto())
    map_ops(model.net.Proto())
    model._blob_to_device = mapping


def _IsGPUBlob(model, blob_name):
    """Whether a (stripped or full) blob name lives on a GPU; unknown
    names follow the model's device type."""
    if blob_name in model._blob_to_device:
        return model._blob_to_device[blob_name].device_type == caffe2_pb2.CUDA
    blob_name = "{}{}".format(_DevicePrefix(model, model._devices[0]), blob_name)
    if blob_name not in model._blob_to_device:
        return model._device_type == caffe2_pb2.CUDA
    return model._blob_to_device[blob_name].device_type == caffe2_pb2.CUDA


def _AnalyzeOperators(model):
    """Raises when a GPU op touches another device's prefixed blob
    (collectives, copies and the 'dpm' Sum tree are exempt)."""
    for op in model.Proto().op:
        if "NCCL" in op.type or "Copy" in op.type or "Concat" in op.type:
            continue
        if op.type == "Sum" and op.name == "dpm":
            continue
        if "Allreduce" in op.type and ("GLOO" in op.engine or "NCCL" in op.engine):
            continue
        op_dev = op.device_option
        if op_dev.device_type != caffe2_pb2.CUDA:
            continue
        namescope = _DevicePrefix(model, op_dev.cuda_gpu_id)
        for blob in list(op.input) + list(op.output):
            if blob.startswith("{}_".format(model._device_prefix)) and not blob.startswith(
                namescope
            ):
                raise Exception(
                    "Blob {} of op {}, should have namescope {}. Op: {}".format(
                        blob, op.type, namescope, str(op)
                    )
                )


def _ComputeBlobsToSync(model):
    """(sorted BlobReferences, set of stripped names) of the blobs made by
    param_init_net under a device prefix: parameters, optimizer state,
    computed params, less the model-parallel blobs (data_parallel_model_hybrid).
    With a shared model, the one copy of the parameters and their optimizer
    state on the first device, and the computed params of every device
    (upstream kept only the computed params, so a shared model's checkpoints
    held no weights and its shards started from different ones)."""
    from caffe2.python.data_parallel_model_hybrid import ModelParallelBlobs

    sync_names = set()
    blobs_to_sync = []
    prefix = "{}_".format(model._device_prefix)
    split = ModelParallelBlobs(model)  # they differ per device on purpose
    for op in model.param_init_net.Proto().op:
        dp_outputs = [o for o in op.output if o.startswith(prefix)]
        sync_names.update(stripBlobName(o) for o in dp_outputs)
        blobs_to_sync.extend(o for o in dp_outputs if o not in split)
    diff = set(model._param_names) - sync_names
    sync_names -= {stripBlobName(b) for b in split}
    assert diff == set(), "Some params not instantiated in param init net: {}".format(diff)
    if model._shared_model:
        master_prefix = _DevicePrefix(model, model._devices[0])
        blobs_to_sync = [b for b in blobs_to_sync if b.startswith(master_prefix)]
        blobs_to_sync += [str(p) for p in model.GetComputedParams("")]
        sync_names = set(stripBlobName(b) for b in blobs_to_sync)

    prefixlen = len(model._device_prefix) + 1

    def sort_key(b):
        device = int(b[prefixlen : b.index(scope._NAMESCOPE_SEPARATOR)])
        return (device, b)

    blobs_to_sync = sorted(set(blobs_to_sync), key=sort_key)
    return [core.BlobReference(b) for b in blobs_to_sync], sync_names


def _AddGradientOperators(devices, model, losses_by_gpu):
    """A 1.0 seed `<loss>_grad` per loss on its device, then the backward
    pass of all devices at once."""
    loss_grad = {}
    for device in devices:
        with core.DeviceScope(core.DeviceOption(model._device_type, device)):
            for loss in losses_by_gpu[device]:
                grad = model.ConstantFill(loss, str(loss) + "_grad", value=1.0)
                loss_grad[str(loss)] = str(grad)
    model.AddGradientOperators(loss_grad)


def _InterleaveOps(model):
    """Reorders model.net so that op j of every device is adjacent (like
    riffling decks of cards); every device must have the same op types."""
    orig_ops = list(model.net.Proto().op)
    num_devices = len(model._devices)
    num_ops_per_dev = len(orig_ops) // num_devices
    assert num_devices * num_ops_per_dev == len(
        orig_ops
    ), "Number of ops per device in original net is not uniform"
    ops = OrderedDict((d, []) for d in model._devices)
    for op in orig_ops:
        device = op.device_option.cuda_gpu_id
        assert device in ops, "Op {} runs on device {}, not one of {}".format(
            op.type, device, model._devices
        )
        ops[device].append(op)
    for device, device_ops in ops.items():
        assert (
            len(device_ops) == num_ops_per_dev
        ), "Number of ops per device in original net is not uniform"

    new_ops = []
    for j in range(num_ops_per_dev):
        tp = None
        for d in model._devices:
            if tp is None:
                tp = ops[d][j].type
            assert ops[d][j].type == tp, "Type mismatch {} / {}".format(tp, ops[d][j].type)
            new_ops.append(ops[d][j])
    del model.net.Proto().op[:]
    model.net.Proto().op.extend(new_ops)


def _InterDeviceBatchNormalization(model):
    """Makes the SpatialBN ops of all devices (adjacent after
    _InterleaveOps) normalize with the statistics of the whole batch:
    ChannelStats per device, Sum, then each SpatialBN reads the combined
    sums with num_batches = #devices; likewise ChannelBackpropStats, Sum and
    Copy for SpatialBNGradient."""
    orig_ops = list(model.net.Proto().op)
    new_ops = []
    num_devices = len(model._devices)
    batch_norm_ops = []
    injected_ops = []

    spatial_bn_phase = False
    sums_blobs = []
    sumsq_blobs = []
    input_blob_name = None

    spatial_bn_gradient_phase = False
    scale_grad_blobs = []
    bias_grad_blobs = []

    for op in orig_ops:
        if op.type != "SpatialBN" and op.type != "SpatialBNGradient":
            if spatial_bn_phase:
                new_ops.extend(injected_ops)
                new_ops.append(
                    core.CreateOperator("Sum", sums_blobs, input_blob_name + "_sums_combined")
                )
                new_ops.append(
                    core.CreateOperator("Sum", sumsq_blobs, input_blob_name + "_sumsq_combined")
                )
                new_ops.extend(batch_norm_ops)
                injected_ops = []
                batch_norm_ops = []
                sums_blobs = []
                sumsq_blobs = []
                spatial_bn_phase = False
                input_blob_name = None
            elif spatial_bn_gradient_phase:
                new_ops.extend(injected_ops)
                scale_blob = "cpu_0/" + stripBlobName(scale_grad_blobs[0]) + "_combined"
                bias_blob = "cpu_0/" + stripBlobName(bias_grad_blobs[0]) + "_combined"
                new_ops.append(core.CreateOperator("Sum", scale_grad_blobs, scale_blob))
                new_ops.append(core.CreateOperator("Sum", bias_grad_blobs, bias_blob))
                for blob in scale_grad_blobs:
                    new_ops.append(core.CreateOperator("Copy", scale_blob, blob))
                for blob in bias_grad_blobs:
                    new_ops.append(core.CreateOperator("Copy", bias_blob, blob))
                new_ops.extend(batch_norm_ops)
                injected_ops = []
                batch_norm_ops = []
                scale_grad_blobs = []
                bias_grad_blobs = []
                spatial_bn_gradient_phase = False
            new_ops.append(op)
        elif op.type == "SpatialBN":
            spatial_bn_phase = True
            if input_blob_name is None:
                input_blob_name = op.input[0]
            name = op.input[0]
            injected_ops.append(
                core.CreateOperator("ChannelStats", name, [name + "_sums", name + "_sumsq"])
            )
            sums_blobs.append(name + "_sums")
            sumsq_blobs.append(name + "_sumsq")
            op.input.append(input_blob_name + "_sums_combined")
            op.input.append(input_blob_name + "_sumsq_combined")
            op.arg.extend([utils.MakeArgument("num_batches", num_devices)])
            batch_norm_ops.append(op)
        else:
            spatial_bn_gradient_phase = True
            injected_ops.append(
                core.CreateOperator(
                    "ChannelBackpropStats",
                    [op.input[0], op.input[3], op.input[4], op.input[2]],
                    [op.output[1], op.output[2]],
                )
            )
            scale_grad_blobs.append(op.output[1])
            bias_grad_blobs.append(op.output[2])
            op.arg.extend([utils.MakeArgument("num_batches", num_devices)])
            op.input.extend([op.output[1], op.output[2]])
            batch_norm_ops.append(op)

    assert (
        not spatial_bn_phase and not spatial_bn_gradient_phase
    ), "Net modification for inter-device batch normalization failed"
    del model.net.Proto().op[:]
    model.net.Proto().op.extend(new_ops)


def _PruneParametersForSharing(model):
    """Shared model: only the master device's params get updates."""
    assert model._shared_model
    master_prefix = _DevicePrefix(model, model._devices[0])
    model.params = model.GetParams(master_prefix)
    paramset = set(model.params)
    model.param_to_grad = {p: model.param_to_grad[p] for p in model.param_to_grad if p in paramset}
    model.weights = [w for w in model.weights if w in paramset]
    model.biases = [b for b in model.biases if b in paramset]


def _RemapParameterBlobsForSharedModel(model, all_params):
    """Shared model: drops the ops that make non-master params and points
    every read of one to the master copy."""
    assert model._shared_model
    master_prefix = _DevicePrefix(model, model._devices[0])
    log.info("Remapping param blobs to master -> {}".format(master_prefix))
    master_params = set(model.GetParams())
    all_params = set(str(p) for p in all_params)
    master_params = set(str(p) for p in master_params)

    def modify_ops(net):
        ops = []
        for op in net.Proto().op:
            if any(o in all_params and o not in master_params for o in op.output):
                log.debug("Delete op making a non-master param: {}".format(str(op)))
                continue
            for j, inp in enumerate(op.input):
                if inp in all_params and inp not in master_params:
                    op.input[j] = master_prefix + stripBlobName(inp)
            ops.append(op)
        del net.Proto().op[:]
        net.Proto().op.extend(ops)

    modify_ops(model.param_init_net)
    modify_ops(model.net)


def _OptimizeGradientMemorySimple(model, losses_by_gpu, devices):
    log.warning(
        "------- DEPRECATED API, please use " "data_parallel_model.OptimizeGradientMemory() ----- "
    )
    for device in devices:
        model.net._net = memonger.share_grad_blobs(
            model.net,
            losses_by_gpu[device],
            set(model.param_to_grad.values()),
            _DevicePrefix(model, device),
            share_activations=False,
        )


def _AddDynamicMemoryOptimization(model, blobs_to_keep, devices):
    """Frees blobs after their last use, except blobs_to_keep and, with a
    rendezvous, the parameter gradients and bucket buffers (Gloo needs
    their pointers stable)."""
    keep = set()
    if blobs_to_keep is not None:
        for device in devices:
            for blob_name in blobs_to_keep:
                keep.add(_DevicePrefix(model, device) + blob_name)
    if model._rendezvous is not None:
        for grad in model.param_to_grad.values():
            if isinstance(grad, core.GradientSlice):
                keep.update([str(grad.indices), str(grad.values)])
            else:
                keep.add(str(grad))
        keep.update(str(b) for b in getattr(model, "_bucket_buffers", []))
    model.net._net = memonger.release_blobs_when_used(model.net.Proto(), keep)
