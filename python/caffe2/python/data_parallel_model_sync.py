"""Parameter synchronization of data_parallel_model: copying a blob from
the master device to the other devices (_Broadcast, Copy or NCCLBroadcast),
the per-iteration broadcast of computed params (BN running statistics),
the initial and checkpoint sync of all parameters from the master device
and rank 0 (_SyncAllParams, with Gloo or NCCL Broadcast across hosts), and
the public AddBlobSync / AddDistributedBlobSync.

Re-exported by data_parallel_model_collectives and data_parallel_model
under the upstream names; see data_parallel_model for the overall picture.
"""
import logging

from caffe2.proto import caffe2_pb2
from caffe2.python import core
from caffe2.python.data_parallel_model_common_worlds import (
    CollectivesConcurrencyControl,
    _CollectiveRendezvous,
    _CreateOrCloneCommonWorld,
    _IsMultiHost,
)
from caffe2.python.data_parallel_model_graph import _IsGPUBlob

log = logging.getLogger("data_parallel_model")


def _Group(model, blob_name):
    """The per-device copies of a blob, in device order."""
    return list(model._device_grouped_blobs[blob_name].values())


def _Broadcast(devices, model, net, param, use_nccl=False):
    """Copies the master device's copy of `param` to the other devices
    (each Copy on the destination device), or one NCCLBroadcast. A shared
    model's blob that exists on the master device alone (a parameter and its
    optimizer state, read there by every device) needs no copy."""
    master_dev = devices[0]
    if model._shared_model and list(model._device_grouped_blobs[param]) == [master_dev]:
        return
    if use_nccl and _IsGPUBlob(model, param):
        with core.DeviceScope(core.DeviceOption(model._device_type, master_dev)):
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
            net.Copy(
                model._device_grouped_blobs[param][master_dev],
                model._device_grouped_blobs[param][dev_idx],
            )


def _BroadcastComputedParams(devices, model, rendezvous, use_nccl=False):
    """Copies the computed params (BN running stats) of device 0 to the
    others every iteration; across hosts they are not synchronized."""
    if rendezvous is None:
        _BroadcastComputedParamsSingleHost(devices, model, use_nccl)
    else:
        _BroadcastComputedParamsDistributed(devices, model, rendezvous, use_nccl)


def _BroadcastComputedParamsDistributed(devices, model, rendezvous, use_nccl=False):
    _BroadcastComputedParamsSingleHost(devices, model, use_nccl)
    log.warning("Distributed broadcast of computed params is not " "implemented yet")


def _BroadcastComputedParamsSingleHost(devices, model, use_nccl=False):
    if len(devices) == 1:
        return
    for param_name in model._computed_param_names:
        # Copy, not average: NCCLAllreduce here is prone to deadlocks.
        _Broadcast(devices, model, model.net, param_name, use_nccl)


def _SyncAllParams(
    devices, model, init_net, net, rendezvous, unique_param_names, max_concurrent_distributed_ops=4
):
    """Appends to `net` the broadcast of every named blob from the master
    device (and, multi-host, from rank 0); common worlds go to
    `init_net`."""
    if not _IsMultiHost(rendezvous):
        _SyncAllParamsSingleHost(devices, model, net, unique_param_names)
    else:
        _SyncAllParamsDistributed(
            devices,
            model,
            init_net,
            net,
            rendezvous,
            unique_param_names,
            max_concurrent_distributed_ops,
        )


def _SyncAllParamsSingleHost(devices, model, net, unique_param_names):
    for param in sorted(unique_param_names):
        _Broadcast(devices, model, net, param)


def _SyncAllParamsDistributed(
    devices, model, init_net, net, rendezvous, unique_param_names, max_concurrent_distributed_ops
):
    assert rendezvous["num_shards"] > 1
    rendezvous = _CollectiveRendezvous(model, rendezvous)
    gpu_device_opt = core.DeviceOption(model._device_type, devices[0])
    cpu_device_opt = core.DeviceOption(caffe2_pb2.CPU)

    if model._broadcast_context is None:
        model._broadcast_context = CollectivesConcurrencyControl(
            "broadcast", max_concurrent_distributed_ops, init_net, rendezvous
        )
    context = model._broadcast_context

    for param_name in sorted(unique_param_names):
        master_param = model._device_grouped_blobs[param_name][devices[0]]
        params_group = _Group(model, param_name)

        def broadcast(params):
            comm_world, control_input = context.get_control_and_context(params)
            kwargs = {}
            if control_input is not None:
                kwargs["control_input"] = control_input
            net.Broadcast(
                inputs=[comm_world] + params,
                outputs=params,
                name=param_name,
                engine=rendezvous["engine"],
                status_blob="broadcast_{}_status".format(str(param_name)),
                **kwargs,
            )

        device_opt = gpu_device_opt if _IsGPUBlob(model, param_name) else cpu_device_opt

        if rendezvous["engine"] == "GLOO":
            with core.DeviceScope(device_opt):
                broadcast(params_group)
        elif rendezvous["engine"] == "NCCL":
            if _IsGPUBlob(model, param_name):
                with core.DeviceScope(gpu_device_opt):
                    broadcast(params_group)
            else:
                _BroadcastHostBlobsOverNccl(net, devices, params_group, broadcast)
        else:
            with core.DeviceScope(device_opt):
                param_cpu = net.CopyGPUToCPU(master_param, str(master_param) + "cpu")
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
            staged.append(net.CopyCPUToGPU(blob, "{}_nccl_stage".format(blob)))
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
        assert not b.startswith(model._device_prefix), "Provide unprefixed blob name: {}".format(b)
        model._device_grouped_blobs[b] = {
            d: core.BlobReference("{}_{}/{}".format(model._device_prefix, d, b))
            for d in model._devices
        }
    _SyncAllParams(model._devices, model, model.param_init_net, net, model._rendezvous, set(blobs))


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
        engine=model._rendezvous["engine"],
        status_blob="blob_sync_allred_{}_status".format(synth_name),
    )
