"""SSA views of nets and blob-device inference, used by Net.ClonePartial,
clone_and_bind_net and the cross-device copy injection."""
from caffe2.proto import caffe2_pb2
import caffe2.python._import_c_extension as C


def get_ssa(net, blob_versions=None):
    """Versions every blob read and written by the ops of `net`.

    Args:
      net: a Net or a NetDef.
      blob_versions: optional {blob: current version}; blobs not in it
        start at version 0. Updated in place.
    Returns:
      (ssa, blob_versions): ssa holds, for each op, a pair
      (versioned inputs, versioned outputs) of [(blob, version)] lists.
    """
    proto = net.Proto() if hasattr(net, "Proto") else net
    assert isinstance(proto, caffe2_pb2.NetDef)
    if blob_versions is None:
        blob_versions = {}
    for name in proto.external_input:
        blob_versions.setdefault(str(name), 0)
    ssa = []
    for op in proto.op:
        inputs = [(str(i), blob_versions.get(str(i), 0)) for i in op.input]
        if not proto.external_input:
            # Without declared inputs, every first read is an input.
            for i in op.input:
                blob_versions.setdefault(str(i), 0)
        for o in op.output:
            blob_versions[str(o)] = blob_versions.get(str(o), 0) + 1
        outputs = [(str(o), blob_versions[str(o)]) for o in op.output]
        ssa.append((inputs, outputs))
    return ssa, blob_versions


def get_undefined_blobs(ssa):
    """Blobs read before any op of `ssa` writes them (version 0 inputs)."""
    undefined = set()
    for inputs, _ in ssa:
        undefined.update(name for name, version in inputs if version == 0)
    return undefined


def get_output_producers(ssa):
    """{(blob, version): index of the op that produces it}."""
    producers = {}
    for index, (_, outputs) in enumerate(ssa):
        for versioned in outputs:
            producers[versioned] = index
    return producers


def get_op_ids_in_path(ssa, blob_versions, inputs, outputs):
    """Sorted indices of the ops needed to compute the latest versions of
    `outputs` when the latest versions of `inputs` are given."""
    given = set((str(i), blob_versions[str(i)]) for i in inputs)
    producers = get_output_producers(ssa)
    pending = [(str(o), blob_versions[str(o)]) for o in outputs]
    used = set()
    while pending:
        versioned = pending.pop()
        if versioned in given or versioned not in producers:
            continue
        op_id = producers[versioned]
        if op_id not in used:
            used.add(op_id)
            pending.extend(ssa[op_id][0])
    return sorted(used)


def InferBlobDevices(net):
    """{output blob: device option of the op that writes it}."""
    mapping = {}
    for op in net.Proto().op:
        for output in op.output:
            mapping[output] = op.device_option
    return mapping


def InferOpBlobDevices(op):
    """(input devices, output devices) of `op`, from its schema."""
    inputs, outputs = C.infer_op_input_output_device(op.SerializeToString())

    def parse(serialized):
        option = caffe2_pb2.DeviceOption()
        option.ParseFromString(serialized)
        return option

    return [parse(s) for s in inputs], [parse(s) for s in outputs]


def InferOpBlobDevicesAsDict(op):
    """Like InferOpBlobDevices, as ({input: device}, {output: device})."""
    input_devices, output_devices = InferOpBlobDevices(op)
    return (dict(zip(op.input, input_devices)), dict(zip(op.output, output_devices)))


def InferOpDeviceAsBlobDevices(op):
    """The op's own device for every input and output."""
    device = op.device_option if op.HasField("device_option") else caffe2_pb2.DeviceOption()
    return [device] * len(op.input), [device] * len(op.output)
