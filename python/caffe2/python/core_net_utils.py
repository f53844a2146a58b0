"""Net-level helpers of core: binding clones, and copies between devices."""
import copy

from caffe2.proto import caffe2_pb2
from caffe2.python.core_base import BlobReference, CreateOperator, device_equal
from caffe2.python.core_graph import (
    InferOpBlobDevices,
    InferOpDeviceAsBlobDevices,
    get_ssa,
    get_undefined_blobs,
)
from caffe2.python.core_net import Net


def clone_and_bind_net(net, name, prefix, blob_remap=None, inputs=None, keep_schema=True):
    """Clones `net`, prefixing the blobs it defines with `prefix`.

    Args:
      blob_remap: extra {old name: new name} (updated and returned).
      inputs: a schema record whose blobs replace the net's input record
        (must cover its fields).
      keep_schema: keep the (remapped) schema; else use `inputs`.
    Returns:
      (cloned net, blob_remap)
    """
    assert isinstance(net, Net)
    if blob_remap is None:
        blob_remap = {}
    if inputs is not None:
        from caffe2.python import schema

        assert isinstance(inputs, schema.Field)
        original = net.input_record()
        assert original is not None
        diff = set(original.field_names()) - set(inputs.field_names())
        assert len(diff) == 0, (
            "Schemas don't match, extra fields {} found in the net {}. "
            "original: {}; inputs: {}".format(
                diff, net.Name(), original.field_names(), inputs.field_names()
            )
        )
        original_mapping = dict(zip(original.field_names(), original.field_blobs()))
        for field_name, blob in zip(inputs.field_names(), inputs.field_blobs()):
            if field_name in original_mapping:
                blob_remap[str(original_mapping[field_name])] = str(blob)
    ssa, blob_versions = get_ssa(net.Proto())
    undef_blobs = get_undefined_blobs(ssa)
    for blob in blob_versions:
        if blob in blob_remap:
            continue
        blob_remap[blob] = blob if blob in undef_blobs else prefix + blob
    cloned_net = net.Clone(name, blob_remap, keep_schema=keep_schema)
    if not keep_schema and inputs:
        cloned_net.set_input_record(inputs)
    return cloned_net, blob_remap


def get_net_name(netlike):
    """The name of a Net or NetDef; anything else is returned as is."""
    if isinstance(netlike, Net):
        return netlike.Proto().name
    if isinstance(netlike, caffe2_pb2.NetDef):
        return netlike.name
    return netlike


def output_to_list(op_output):
    """The outputs returned by a Net op method, as a list."""
    if op_output is None:
        return []
    if isinstance(op_output, list):
        return op_output
    if isinstance(op_output, tuple):
        return list(op_output)
    if isinstance(op_output, BlobReference):
        return [op_output]
    raise ValueError("Invalid op_output: {}".format(op_output))


def _name_on_device(blob, device):
    if device.device_type == caffe2_pb2.CPU:
        return blob + "_cpu"
    if device.device_type == caffe2_pb2.CUDA:
        return blob + "_cuda_" + str(device.cuda_gpu_id)
    raise RuntimeError("Unknown device type: {}".format(device.device_type))


def _copy_op_type_and_device(src, dst):
    if src.device_type == caffe2_pb2.CUDA and dst.device_type == caffe2_pb2.CPU:
        return "CopyGPUToCPU", src
    if src.device_type == caffe2_pb2.CPU and dst.device_type == caffe2_pb2.CUDA:
        return "CopyCPUToGPU", dst
    return "Copy", dst


def InjectCrossDeviceCopies(net, blob_to_device=None, blob_remap=None, placeHolderOps=None):
    """A copy of `net` with copy ops wherever an op reads a blob that lives
    on another device.

    Args:
      blob_to_device: {blob: DeviceOption} known so far (external inputs
        not in it are taken to live on the net's device).
      blob_remap: {(blob, device_type, gpu_id): name of its copy there},
        shared across nets so copies are reused.
      placeHolderOps: op types whose blobs live on the op's own device
        (instead of what their schema says).
    Returns:
      (new Net named `<name>_cross_device`, updated blob_to_device). Copies
      are named `<blob>_cpu` or `<blob>_cuda_<gpu_id>`.
    """
    new_net = net.Clone(net.Proto().name + "_cross_device", keep_schema=True)
    new_proto = new_net.Proto()
    del new_proto.op[:]
    if blob_to_device is None:
        blob_to_device = {}
    if blob_remap is None:
        blob_remap = {}
    net_option = net.Proto().device_option

    # Copies of external inputs made by earlier nets are inputs too.
    copied = []
    for name in new_proto.external_input:
        copied.extend(mapped for (blob, _, _), mapped in blob_remap.items() if blob == name)
    new_proto.external_input.extend(copied)

    for op in net.Proto().op:
        if placeHolderOps is not None and op.type in placeHolderOps:
            input_devices, output_devices = InferOpDeviceAsBlobDevices(op)
        else:
            input_devices, output_devices = InferOpBlobDevices(op)

        renamed = {}
        for device, name in zip(input_devices, op.input):
            assert net.BlobIsDefined(name), "input {} should be defined in the net.".format(name)
            if name not in blob_to_device:
                if not net.is_external_input(name):
                    raise AttributeError("No device information found for blob {}.".format(name))
                blob_to_device[name] = net_option
            if device_equal(blob_to_device[name], device):
                continue
            key = (name, device.device_type, device.cuda_gpu_id)
            if key not in blob_remap:
                copy_name = _name_on_device(name, device)
                copy_type, copy_device = _copy_op_type_and_device(blob_to_device[name], device)
                new_proto.op.extend(
                    [
                        CreateOperator(
                            copy_type,
                            [BlobReference(name)],
                            [BlobReference(copy_name)],
                            device_option=copy_device,
                        )
                    ]
                )
                blob_remap[key] = copy_name
                blob_to_device[copy_name] = device
            renamed[name] = blob_remap[key]

        for device, name in zip(output_devices, op.output):
            if (
                name in blob_to_device
                and name not in op.input
                and not device_equal(blob_to_device[name], device)
            ):
                raise RuntimeError(
                    "In-place blob: {} is not supported between operators "
                    "with different device option previous:{} now: {}. "
                    "Failed op:\n {}".format(name, blob_to_device[name], device, op)
                )

        new_op = copy.deepcopy(op)
        del new_op.input[:]
        new_op.input.extend(renamed.get(b, b) for b in op.input)
        # An in-place op stays in place on the copy it reads.
        for i, name in enumerate(op.output):
            new_op.output[i] = renamed.get(name, name)
            # Copies made before this write are stale now.
            for key in [k for k in blob_remap if k[0] == name]:
                if blob_remap[key] != new_op.output[i]:
                    del blob_remap[key]
        blob_to_device.update(zip(new_op.output, output_devices))
        new_proto.op.extend([new_op])
    return new_net, blob_to_device


def InjectDeviceCopiesAmongNets(nets, blob_to_device_init=None):
    """InjectCrossDeviceCopies over a list of nets run in that order.

    Returns (new nets, blob_to_device)."""
    assert isinstance(nets, list) and all(
        isinstance(n, Net) for n in nets
    ), "nets {} should be a list of nets.".format(str(nets))
    blob_to_device = blob_to_device_init or {}
    blob_remap = {}
    new_nets = []
    for net in nets:
        new_net, blob_to_device = InjectCrossDeviceCopies(
            net, blob_to_device=blob_to_device, blob_remap=blob_remap
        )
        new_nets.append(new_net)
    return new_nets, blob_to_device


def InjectDeviceCopiesAmongNetsWithoutB2D(nets, blob_to_device_init=None):
    new_nets, _ = InjectDeviceCopiesAmongNets(nets, blob_to_device_init)
    return new_nets
