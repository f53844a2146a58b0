"""Blockwise model-update filtering (BMUF) on top of data_parallel_model:
local training on every device, then a periodic block momentum update of
the averaged model. Re-exported by data_parallel_model."""
import copy

from caffe2.python import core, model_helper, workspace
from caffe2.python.data_parallel_model_collectives import (
    AddBlobSync,
    _AllReduceBlobs,
    _SyncAllParams,
)
from caffe2.python.data_parallel_model_graph import (
    _AddGradientOperators,
    _AssertNoDeviceScope,
    _ForEachDevice,
    _GroupByDevice,
    _InferBlobDevice,
    _OptimizeGradientMemorySimple,
    _SetDeviceType,
    _ValidateParams,
)


def Parallelize_GPU_BMUF(*args, **kwargs):
    kwargs["cpu_device"] = False
    Parallelize_BMUF(*args, **kwargs)


def Parallelize_CPU_BMUF(*args, **kwargs):
    kwargs["cpu_device"] = True
    Parallelize_BMUF(*args, **kwargs)


def Parallelize_BMUF(
    model_helper_obj,
    input_builder_fun,
    forward_pass_builder_fun,
    param_update_builder_fun,
    block_learning_rate=1.0,
    block_momentum=None,
    devices=None,
    rendezvous=None,
    net_type="dag",
    master_device=None,
    use_nccl=False,
    nesterov=False,
    optimize_gradient_memory=False,
    reset_momentum_sgd=False,
    warmup_iterations=None,
    max_concurrent_distributed_ops=4,
    add_blobs_to_sync=None,
    num_threads_per_device=4,
    cpu_device=False,
):
    """Blockwise model-update filtering (Chen & Huo, ICASSP 2016): every
    device trains its own copy with param_update_builder_fun for some
    iterations (model.net), then model._global_model_param_updates_net
    (run once by RunNet) averages the copies and applies a block momentum
    update:
        v = block_momentum * v + block_learning_rate * (avg - g)
        g = g + v   (Nesterov: g = g + v - block_momentum * (v - v_prev))
        param = g on every device.
    """
    _AssertNoDeviceScope()
    assert isinstance(model_helper_obj, model_helper.ModelHelper)

    if devices is None:
        devices = list(range(0, workspace.NumCudaDevices()))
    if master_device is None:
        master_device = devices[0]

    _SetDeviceType(model_helper_obj, devices, cpu_device, False)
    model_helper_obj._devices = devices
    model_helper_obj._rendezvous = rendezvous
    model_helper_obj._broadcast_context = None
    master_dev_opt = core.DeviceOption(model_helper_obj._device_type, master_device)

    num_shards = rendezvous["num_shards"] if rendezvous else 1
    # Devices over all hosts.
    num_devices = len(devices) * num_shards
    num_workers = num_threads_per_device * len(devices)
    if rendezvous:
        num_workers += 8

    loss_scale = 1.0 / num_devices
    if block_momentum is None:
        block_momentum = 1.0 - 1.0 / num_devices

    max_concurrent_distributed_ops = min(max_concurrent_distributed_ops, num_workers - 1)
    model_helper_obj.net.Proto().num_workers = num_workers
    model_helper_obj.net.Proto().type = net_type

    # Initializes the global model, once, after param_init_net.
    model_helper_obj._global_model_init_net = core.Net("global_model_init")
    model_helper_obj._global_model_init_net.Proto().type = net_type
    model_helper_obj._global_model_init_net.Proto().num_workers = num_workers

    # The block update, run after `net` ran its local iterations.
    model_helper_obj._global_model_param_updates_net = core.Net("global_model")
    model_helper_obj._global_model_param_updates_net.Proto().type = net_type
    model_helper_obj._global_model_param_updates_net.Proto().num_workers = num_workers

    def _v(param):
        return "{}_v".format(param)

    def _g(param):
        return "{}_g".format(param)

    def _v_prev(param):
        return "{}_prev".format(param)

    non_datapar_params = copy.copy(model_helper_obj.params)
    model_helper_obj._losses_by_gpu = {}

    def _InitializeModels(gpu_id):
        input_builder_fun(model_helper_obj)
        loss = forward_pass_builder_fun(model_helper_obj, loss_scale)
        model_helper_obj._losses_by_gpu[gpu_id] = loss

    _ForEachDevice(
        devices,
        _InitializeModels,
        device_type=model_helper_obj._device_type,
        device_prefix=model_helper_obj._device_prefix,
        scoped=True,
    )
    _ValidateParams(model_helper_obj.params)

    model_helper_obj._device_grouped_blobs = _GroupByDevice(
        model_helper_obj, devices, model_helper_obj.params, non_datapar_params
    )
    model_helper_obj._param_names = list(model_helper_obj._device_grouped_blobs.keys())

    _AddGradientOperators(devices, model_helper_obj, model_helper_obj._losses_by_gpu)
    _ValidateParams(model_helper_obj.params)
    _InferBlobDevice(model_helper_obj)

    def _InitializeParamUpdate(gpu_id):
        param_update_builder_fun(model_helper_obj)

    _ForEachDevice(
        devices,
        _InitializeParamUpdate,
        device_type=model_helper_obj._device_type,
        device_prefix=model_helper_obj._device_prefix,
        scoped=True,
    )

    model_parameter_names = list(model_helper_obj._device_grouped_blobs.keys())
    if warmup_iterations is not None:
        model_helper_obj._warmup_iterations = warmup_iterations
        # Broadcasts the master's parameters after the warmup iterations.
        model_helper_obj._warmup_broadcast = core.Net("warmup-broadcast")
        model_helper_obj._warmup_broadcast.Proto().type = net_type
        model_helper_obj._warmup_broadcast.Proto().num_workers = num_workers
        _SyncAllParams(
            devices,
            model_helper_obj,
            model_helper_obj.param_init_net,
            model_helper_obj._warmup_broadcast,
            rendezvous,
            model_parameter_names,
            max_concurrent_distributed_ops,
        )
        for param_name in model_helper_obj._device_grouped_blobs.keys():
            param = model_helper_obj._device_grouped_blobs[param_name][master_device]
            with core.DeviceScope(master_dev_opt):
                model_helper_obj._warmup_broadcast.Copy(param, _g(param))

    # Step 0: the block momentum and the global model on the master.
    init_net = model_helper_obj._global_model_init_net
    for param_name in model_helper_obj._device_grouped_blobs.keys():
        param = model_helper_obj._device_grouped_blobs[param_name][master_device]
        with core.DeviceScope(master_dev_opt):
            init_net.ConstantFill(param, _v(param), value=0.0)
            init_net.Copy(param, _g(param))
            if nesterov:
                init_net.ConstantFill(param, _v_prev(param), value=0.0)

    # Step 1 (local iterations) is model.net. Step 2: sum the copies.
    updates_net = model_helper_obj._global_model_param_updates_net
    _AllReduceBlobs(
        model_parameter_names,
        devices,
        model_helper_obj,
        updates_net,
        rendezvous,
        use_nccl,
        max_concurrent_distributed_ops,
    )

    # Step 3: the block momentum update on the master.
    for param_name in model_parameter_names:
        param = model_helper_obj._device_grouped_blobs[param_name][master_device]
        with core.DeviceScope(master_dev_opt):
            updates_net.Scale(param, param, scale=1.0 / num_devices)
            updates_net.Sub([param, _g(param)], param)
            updates_net.Scale(param, param, scale=block_learning_rate)
            updates_net.Scale(_v(param), _v(param), scale=block_momentum)
            updates_net.Add([_v(param), param], _v(param))
            updates_net.Add([_g(param), _v(param)], _g(param))
            if nesterov:
                updates_net.Sub([_v(param), _v_prev(param)], _v_prev(param))
                updates_net.Scale(_v_prev(param), _v_prev(param), scale=block_momentum)
                updates_net.Sub([_g(param), _v_prev(param)], _g(param))
                updates_net.Copy(_v(param), _v_prev(param))
            updates_net.Copy(_g(param), param)

    _SyncAllParams(
        devices,
        model_helper_obj,
        model_helper_obj.param_init_net,
        updates_net,
        rendezvous,
        model_parameter_names,
        max_concurrent_distributed_ops,
    )

    if add_blobs_to_sync is not None:
        AddBlobSync(model_helper_obj, add_blobs_to_sync, net=updates_net)

    if reset_momentum_sgd:
        momentum_ops = [
            op for op in model_helper_obj.net.Proto().op if op.type == "MomentumSGDUpdate"
        ]
        for op in momentum_ops:
            momentum_blob = op.input[1]
            with core.DeviceScope(op.device_option):
                updates_net.ConstantFill([momentum_blob], momentum_blob, value=0.0)

    if optimize_gradient_memory:
        _OptimizeGradientMemorySimple(model_helper_obj, model_helper_obj._losses_by_gpu, devices)

    model_helper_obj._data_parallel_model_init_nets = [
        model_helper_obj.param_init_net,
        model_helper_obj._global_model_init_net,
    ]
    model_helper_obj._data_parallel_model_nets = [model_helper_obj.net, (updates_net, 1)]
