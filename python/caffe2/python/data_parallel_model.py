"""Data-parallel (synchronous SGD) training on several devices and hosts.

    data_parallel_model.Parallelize(
        model, input_builder_fun=add_inputs,
        forward_pass_builder_fun=add_model_and_loss,   # returns [loss]
        optimizer_builder_fun=add_optimizer,
        devices=[0, 1], cpu_device=True)
    data_parallel_model.RunInitNet(model)
    data_parallel_model.RunNet(model, 1)

Parallelize builds one copy of the model per device, under the device's
DeviceScope and the NameScope "<prefix>_<id>" (prefix "gpu" or "cpu"), so
every blob is named like "gpu_1/conv1_w". The forward builder scales its
loss by 1 / (#devices * #shards), gradients are SUMMED over devices and
hosts (never averaged), and each device then applies the same update, so
the replicas stay identical. Gradients are reduced last layer first so the
communication of late layers overlaps the backward pass of early ones.

Reduction paths: single host GPU - a tree of Sum ops named 'dpm' and Copy
broadcasts (or NCCLAllreduce with use_nccl); single host CPU - Sum into
the first device and Copy back (no copy with shared_model); several hosts
(rendezvous with num_shards > 1, engine 'GLOO') - one Gloo Allreduce per
gradient over the local buffers of all devices, on up to
max_concurrent_distributed_ops common worlds. Only the first world
("allreduce_0_cw") rendezvouses through the store; the others clone it.
A GPU model rendezvousing through a store uses the NCCL engine instead
(when this build has it): NCCL worlds with one rank per local GPU, one
Allreduce per gradient on the GPU buffers, all on the one world
"allreduce_0_cw" (see data_parallel_model_collectives).
Initial parameters are broadcast from device 0 of rank 0 in
param_init_net. Errors of the Gloo ops set the "..._status" blobs and fail
the net (there is no recovery: a dead shard stops the training).

Gradient bucketing (beyond upstream): Parallelize(..., bucket_size_mb=X)
fuses, on the multi-host GLOO path, runs of consecutive (in the reverse
reduction order) dense float gradients whose sizes add up to less than X
MiB into one Allreduce: per device FlattenDenseTensors packs them into a
buffer blob "<prefix>_<d>/dpm_bucket_<i>" (constant size, so allocated
once and pointer-stable as Gloo requires), the Allreduce named
"dpm_bucket_<i>" (status "allreduce_dpm_bucket_<i>_status") sums the
buffers, and UnflattenDenseTensors copies them back into the gradients.
Gradients of X MiB or more, sparse ones and those whose shape does not
follow from param_init_net stay alone. None or 0 (the default) disables
it, giving the upstream nets unchanged. Buffers are kept out of
dynamic_memory_management's Free ops.

The implementation is split over data_parallel_model_graph (blob grouping,
device inference, sync lists, batch-norm rewrite, shared model, memory),
data_parallel_model_collectives (gradient all-reduce and bucketing, and
the re-exports of data_parallel_model_common_worlds and
data_parallel_model_sync: common worlds, broadcasts, blob syncs),
data_parallel_model_checkpoint (checkpoint params and sync),
data_parallel_model_convert (ConvertNetForDevice, ExtractPredictorNet) and
data_parallel_model_bmuf (Parallelize_BMUF); this module re-exports their
functions under the upstream names.
"""
import copy
import logging

from caffe2.proto import caffe2_pb2
from caffe2.python import core, dyndep, memonger, model_helper, workspace
from caffe2.python.data_parallel_model_bmuf import (  # noqa: F401
    Parallelize_BMUF,
    Parallelize_CPU_BMUF,
    Parallelize_GPU_BMUF,
)
from caffe2.python.data_parallel_model_checkpoint import (  # noqa: F401
    FinalizeAfterCheckpoint,
    GetCheckpointParams,
    _RunComparison,
)
from caffe2.python.data_parallel_model_collectives import (  # noqa: F401
    _DEFAULT_TIMEOUT_SEC,
    AddBlobSync,
    AddDistributedBlobSync,
    CollectivesConcurrencyControl,
    _AllReduce,
    _AllReduceBlobs,
    _AllReduceBlobsDistributed,
    _AllReduceBlobsSingleHost,
    _Broadcast,
    _BroadcastComputedParams,
    _BroadcastComputedParamsDistributed,
    _BroadcastComputedParamsSingleHost,
    _CreateOrCloneCommonWorld,
    _PlanBuckets,
    _SyncAllParams,
    _SyncAllParamsDistributed,
    _SyncAllParamsSingleHost,
)
from caffe2.python.data_parallel_model_convert import (  # noqa: F401
    ConvertNetForDevice,
    ExtractPredictorNet,
)
from caffe2.python.data_parallel_model_hybrid import (  # noqa: F401
    GatherModelParallelParts,
    IsModelParallel,
    LoadModelParallelPart,
    ModelParallelBlobs,
    ReadModelParallelPart,
    SaveModelParallelPart,
    SplitRows,
    _SetupModelParallelFC,
)
from caffe2.python.data_parallel_model_graph import (  # noqa: F401
    _AddDynamicMemoryOptimization,
    _AddGradientOperators,
    _AnalyzeOperators,
    _AssertNoDeviceScope,
    _ComputeBlobsToSync,
    _ForEachDevice,
    _GroupByDevice,
    _InferBlobDevice,
    _InterDeviceBatchNormalization,
    _InterleaveOps,
    _IsGPUBlob,
    _OptimizeGradientMemorySimple,
    _PruneParametersForSharing,
    _RemapParameterBlobsForSharedModel,
    _SetDeviceType,
    _ValidateParams,
    stripBlobName,
)

dyndep.InitOpsLibrary("@/caffe2/caffe2/contrib/nccl:nccl_ops")
dyndep.InitOpsLibrary("@/caffe2/caffe2/contrib/gloo:gloo_ops")
dyndep.InitOpsLibrary("@/caffe2/caffe2/contrib/gloo:gloo_ops_gpu")

log = logging.getLogger("data_parallel_model")
log.setLevel(logging.INFO)


def Parallelize_GPU(*args, **kwargs):
    kwargs["cpu_device"] = False
    Parallelize(*args, **kwargs)


def Parallelize_CPU(*args, **kwargs):
    kwargs["cpu_device"] = True
    Parallelize(*args, **kwargs)


def Parallelize(
    model_helper_obj,
    input_builder_fun,
    forward_pass_builder_fun,
    param_update_builder_fun=None,
    optimizer_builder_fun=None,
    post_sync_builder_fun=None,
    devices=None,
    rendezvous=None,
    net_type="dag",
    broadcast_computed_params=True,
    optimize_gradient_memory=False,
    dynamic_memory_management=False,
    blobs_to_keep=None,
    use_nccl=False,
    max_concurrent_distributed_ops=16,
    cpu_device=False,
    num_threads_per_device=4,
    shared_model=False,
    combine_spatial_bn=False,
    bucket_size_mb=None,
    model_parallel_fc=None,
):
    """Turns `model_helper_obj` into a data-parallel model over `devices`.

    input_builder_fun(model): adds the input ops of one device.
    forward_pass_builder_fun(model, loss_scale): adds the model of one
        device and returns its list of losses, scaled by loss_scale.
    param_update_builder_fun(model): adds the updates of one device
        (called under each device's scopes), or
    optimizer_builder_fun(model): builds the optimizer once for all
        devices and returns it. Neither: a forward-only (test) model.
    post_sync_builder_fun(model): per device, after the initial sync.
    devices: device ids (GPU ids, or any ids with cpu_device=True).
    rendezvous: None (single host) or a dict with kv_handler (the store
        handler blob, None for MPI), shard_id, num_shards, engine ('GLOO';
        GPU models with a store use 'NCCL' when built, or ask for it),
        optional transport ('tcp'/'ibverbs'), interface, mpi_rendezvous.
    net_type, num_threads_per_device: the net's executor and its workers.
    broadcast_computed_params: copy device 0's BN statistics to the others
        every iteration.
    optimize_gradient_memory / dynamic_memory_management / blobs_to_keep:
        memonger blob sharing / Free after last use (exclusive).
    use_nccl: NCCL all-reduce between local GPUs.
    max_concurrent_distributed_ops: Gloo common worlds used in parallel.
    cpu_device, shared_model, combine_spatial_bn: CPU devices; one copy of
        the parameters for all of them; batch norm over the whole batch.
    bucket_size_mb: gradient bucketing on the multi-host GLOO path (see the
        module docstring); None or 0 disables it.
    model_parallel_fc: names of FC layers to split by output rows over all
        devices of all shards (hybrid parallelism, CPU devices; see
        data_parallel_model_hybrid).
    """
    _AssertNoDeviceScope()
    if devices is None:
        # Upstream builds a 1-tuple here; pass devices explicitly.
        devices = (list(range(0, workspace.NumCudaDevices())),)

    device_name = _SetDeviceType(model_helper_obj, devices, cpu_device, shared_model)
    if shared_model and rendezvous is not None:
        log.warning("Shared model only supported on single-node currently")

    log.info("Parallelizing model for devices: {}".format(devices))
    extra_workers = 8 if rendezvous is not None else 0
    num_workers = len(devices) * num_threads_per_device + extra_workers
    max_concurrent_distributed_ops = min(max_concurrent_distributed_ops, num_workers - 1)
    model_helper_obj.net.Proto().num_workers = num_workers
    model_helper_obj.net.Proto().type = net_type

    model_helper_obj._devices = devices
    model_helper_obj._rendezvous = rendezvous
    model_helper_obj._broadcast_context = None
    model_helper_obj._grad_names = []
    model_helper_obj._bucket_size_mb = bucket_size_mb

    assert isinstance(model_helper_obj, model_helper.ModelHelper)

    # Params made before Parallelize are not data parallel.
    non_datapar_params = copy.copy(model_helper_obj.params)

    log.info("Create input and model training operators")
    losses_by_gpu = {}
    num_shards = 1 if rendezvous is None else rendezvous["num_shards"]
    loss_scale = 1.0 / (len(devices) * num_shards)

    has_parameter_updates = (
        param_update_builder_fun is not None or optimizer_builder_fun is not None
    )
    assert not (param_update_builder_fun is not None and optimizer_builder_fun is not None), (
        "Can only specify one of param_update_builder_fun, " "optimizer_builder_fun"
    )

    if not has_parameter_updates and model_helper_obj.init_params:
        log.warning(
            "Model {} is used for testing/validation but has "
            "init_params=True: running its param_init_net would "
            "overwrite the trained parameters. Use "
            "ModelHelper(init_params=False).".format(model_helper_obj.name)
        )

    for device in devices:
        device_opt = core.DeviceOption(model_helper_obj._device_type, device)
        with core.DeviceScope(device_opt):
            with core.NameScope("{}_{}".format(model_helper_obj._device_prefix, device)):
                log.info("Model for {} : {}".format(device_name, device))
                input_builder_fun(model_helper_obj)
                losses = forward_pass_builder_fun(model_helper_obj, loss_scale)
                if has_parameter_updates:
                    assert isinstance(
                        losses, list
                    ), "Model builder function must return list of loss blobs"
                    for loss in losses:
                        assert isinstance(
                            loss, core.BlobReference
                        ), "Model builder func must return list of loss blobs"
                losses_by_gpu[device] = losses
    if model_parallel_fc:
        assert (
            not combine_spatial_bn
        ), "model_parallel_fc cannot be combined with combine_spatial_bn"
        _SetupModelParallelFC(model_helper_obj, list(model_parallel_fc), rendezvous)
    _ValidateParams(model_helper_obj.params)

    model_helper_obj._device_grouped_blobs = _GroupByDevice(
        model_helper_obj, devices, model_helper_obj.params, non_datapar_params
    )
    computed_params_grouped = _GroupByDevice(
        model_helper_obj, devices, model_helper_obj.GetComputedParams(""), []
    )
    model_helper_obj._device_grouped_blobs.update(computed_params_grouped)
    model_helper_obj._param_names = list(model_helper_obj._device_grouped_blobs.keys())
    model_helper_obj._computed_param_names = list(computed_params_grouped.keys())

    if not has_parameter_updates:
        log.info("Parameter update function not defined --> only forward")
        _InferBlobDevice(model_helper_obj)
        if shared_model:
            # Beyond upstream (which returned here): a forward-only model that shares a shared
            # training model's parameters reads the master copies on every device too.
            forward_params = set(model_helper_obj.GetParams(""))
            _PruneParametersForSharing(model_helper_obj)
            _RemapParameterBlobsForSharedModel(model_helper_obj, forward_params)
        return

    log.info("Adding gradient operators")
    _AddGradientOperators(devices, model_helper_obj, losses_by_gpu)

    if combine_spatial_bn:
        assert cpu_device, "combine_spatial_bn is currently only supported on the CPU"
        _InterleaveOps(model_helper_obj)
        _InterDeviceBatchNormalization(model_helper_obj)

    _ValidateParams(model_helper_obj.params)

    param_to_grad = model_helper_obj.param_to_grad
    split = ModelParallelBlobs(model_helper_obj)  # complete on their device: no all-reduce
    grads_ordered = [
        param_to_grad[p]
        for p in model_helper_obj.params
        if p in param_to_grad and str(p) not in split
    ]
    non_datapar_grads = [param_to_grad[p] for p in non_datapar_params]
    gradients_grouped = _GroupByDevice(model_helper_obj, devices, grads_ordered, non_datapar_grads)
    model_helper_obj._device_grouped_blobs.update(gradients_grouped)
    model_helper_obj._grad_names = list(gradients_grouped.keys())
    model_helper_obj._losses_by_gpu = losses_by_gpu

    _InferBlobDevice(model_helper_obj)

    log.info("Add gradient all-reduces for SyncSGD")
    if broadcast_computed_params:
        _BroadcastComputedParams(devices, model_helper_obj, rendezvous, use_nccl)

    if len(model_helper_obj._grad_names) > 0:
        reverse_ordered_grads = _GetReverseOrderedGrads(model_helper_obj)
        _AllReduceBlobs(
            reverse_ordered_grads,
            devices,
            model_helper_obj,
            model_helper_obj.net,
            rendezvous,
            use_nccl,
            max_concurrent_distributed_ops,
            bucket_size_mb=bucket_size_mb,
        )
    else:
        log.info("NOTE: Param builder function did not create any " "parameters.")

    log.info("Post-iteration operators for updating params")
    all_params = set(model_helper_obj.GetParams(""))
    if shared_model:
        _PruneParametersForSharing(model_helper_obj)

    if param_update_builder_fun is not None:
        _CallPerDevice(model_helper_obj, devices, param_update_builder_fun)
    else:
        log.info("Calling optimizer builder function")
        model_helper_obj._optimizer = optimizer_builder_fun(model_helper_obj)

    sync_blobs, sync_names = _ComputeBlobsToSync(model_helper_obj)
    model_helper_obj._device_grouped_blobs.update(
        _GroupByDevice(model_helper_obj, devices, sync_blobs, [])
    )

    _InferBlobDevice(model_helper_obj)
    _AnalyzeOperators(model_helper_obj)

    # Read by upstream's DAG executor (one worker on the first run); this
    # runtime accepts and ignores it.
    arg = model_helper_obj.Proto().arg.add()
    arg.name = "first_iter_only_one_worker"
    arg.i = 1

    log.info("Add initial parameter sync")
    _SyncAllParams(
        devices,
        model_helper_obj,
        model_helper_obj.param_init_net,
        model_helper_obj.param_init_net,
        rendezvous,
        sync_names,
        max_concurrent_distributed_ops=1,
    )

    if post_sync_builder_fun is not None:
        _CallPerDevice(model_helper_obj, devices, post_sync_builder_fun)

    assert not (optimize_gradient_memory and dynamic_memory_management), (
        "It is not advised to use gradient optimization ('memonger') "
        "with dynamic memory management."
    )
    if optimize_gradient_memory:
        _OptimizeGradientMemorySimple(model_helper_obj, losses_by_gpu, devices)
    if dynamic_memory_management:
        _AddDynamicMemoryOptimization(model_helper_obj, blobs_to_keep, devices)

    model_helper_obj._data_parallel_model_init_nets = [model_helper_obj.param_init_net]
    model_helper_obj._data_parallel_model_nets = [model_helper_obj.net]

    if shared_model:
        _RemapParameterBlobsForSharedModel(model_helper_obj, all_params)


def _CallPerDevice(model, devices, builder_fun):
    """builder_fun(model) once per device, under its DeviceScope and NameScope."""
    for device in devices:
        with core.DeviceScope(core.DeviceOption(model._device_type, device)):
            with core.NameScope("{}_{}".format(model._device_prefix, device)):
                builder_fun(model)


def _GetReverseOrderedGrads(model):
    """Gradient group names, last parameter first (the order in which the
    backward pass produces them)."""
    return list(reversed(model._grad_names))


def RunInitNet(model):
    """Runs the init nets once and creates the training nets."""
    for init_net in model._data_parallel_model_init_nets:
        workspace.RunNetOnce(init_net)
    for net_iters in model._data_parallel_model_nets:
        if isinstance(net_iters, tuple):
            workspace.CreateNet(net_iters[0])
        else:
            workspace.CreateNet(net_iters)


def RunWarmup(model):
    workspace.RunNet(model.net, model._warmup_iterations)
    workspace.RunNetOnce(model._warmup_broadcast)


def RunNet(model, num_iterations):
    """Runs the training net num_iterations times (then, for BMUF, the
    global update net once)."""
    for net_iter in model._data_parallel_model_nets:
        if isinstance(net_iter, tuple):
            workspace.RunNet(net_iter[0].Proto().name, net_iter[1])
        else:
            workspace.RunNet(net_iter, num_iterations)


barrier_instance = 0


def Synchronize(model, timeout_sec=_DEFAULT_TIMEOUT_SEC):
    """A Gloo barrier over all hosts (no-op on one host). Every host must
    call it equally often: the n-th call uses sync_barrier_cw_<n>."""
    if model._rendezvous is None or model._rendezvous["num_shards"] <= 1:
        return
    log.info("Creating a barrier net")
    assert model._rendezvous["engine"] == "GLOO", "Engine does not support barrier"
    global barrier_instance
    instance = barrier_instance
    barrier_instance += 1
    barrier_net = core.Net("sync_barrier_net_" + str(instance))
    comm_world = _CreateOrCloneCommonWorld(
        barrier_net,
        "sync_barrier_cw_" + str(instance),
        rendezvous=model._rendezvous,
        status_blob="sync_barrier_cw_status_" + str(instance),
        timeout_sec=timeout_sec,
    )
    barrier_net.Barrier(
        inputs=[comm_world],
        outputs=[],
        engine=model._rendezvous["engine"],
        status_blob="sync_barrier_status_" + str(instance),
    )
    workspace.RunNetOnce(barrier_net)


def GetLearningRateBlobNames(model):
    """The learning-rate blobs of the optimizer built by
    optimizer_builder_fun (one per GPU, or one shared CPU blob); without
    one, the outputs of the LearningRate ops of the net."""
    if getattr(model, "_optimizer", None) is not None:
        if model._device_type == caffe2_pb2.CPU:
            return [model._optimizer.get_cpu_blob_name("lr")]
        elif model._device_type == caffe2_pb2.CUDA:
            return [model._optimizer.get_gpu_blob_name("lr", gpu, "") for gpu in model._devices]
        raise Exception("Unsupported device type : {}".format(model._device_type))
    # Upstream calls op.output(0) here and raises; this returns the blobs.
    return [op.output[0] for op in model.net.Proto().op if op.type == "LearningRate"]


def OptimizeGradientMemory(model, input_shapes, excluded_blobs, recycle_activations):
    """Shares gradient blobs (and, with recycle_activations, activations)
    per device with memonger.

    input_shapes: {unprefixed input: shape} to size the blobs, or None.
    excluded_blobs: unprefixed names never shared.
    """
    if input_shapes is not None:
        input_shapes_all_devices = {}
        for b, shp in input_shapes.items():
            for d in model._devices:
                input_shapes_all_devices["{}_{}/{}".format(model._device_prefix, d, b)] = shp
        shapes, _ = workspace.InferShapesAndTypes(
            [model.param_init_net, model.net], input_shapes_all_devices
        )
    else:
        shapes = None

    for device in model._devices:
        namescope = "{}_{}/".format(model._device_prefix, device)
        excluded_blobs_by_device = set(namescope + b for b in excluded_blobs)
        model.net._net = memonger.share_grad_blobs(
            model.net,
            model._losses_by_gpu[device],
            set(model.param_to_grad.values()),
            namescope,
            dont_share_blobs=excluded_blobs_by_device,
            share_activations=recycle_activations,
            blob_shapes=shapes,
        )
