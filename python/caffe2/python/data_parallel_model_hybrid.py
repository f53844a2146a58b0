"""Hybrid parallelism (beyond upstream): data-parallel layers, model-parallel FC layers.

    data_parallel_model.Parallelize(model, ..., rendezvous=..., model_parallel_fc=["fc6", "fc7"])

Each named FC layer (the FC op whose output is "<prefix>_<d>/<name>") is split by output rows
over the G = devices x shards global devices, numbered shard-major (global index shard * k + i
for local device i): device g keeps rows [start_g, start_g + rows_g) of the weight and the bias,
the first dim_out % G devices one row more (SplitRows). Its forward becomes

    AllgatherBatch(X of every device)   -> "<name>_mp_input"      (the whole global batch)
    FC(that, W slice, b slice)          -> "<prefix>_<d>/<name>_mp_columns"   per device
    ColumnShardsToBatch(those columns)  -> "<prefix>_<d>/<name>"  (own examples, every column)

and AddGradientOperators differentiates it into BatchToColumnShards, FCGradient and
ReduceScatterBatch (the exchanges are each other's gradients). The split weights' gradients are
complete on their device, so they take no part in the gradient all-reduce, the initial broadcast
or the checkpoint sync; neither does the optimizer state made from them in param_init_net (the
blobs derived from a split weight there: ModelParallelBlobs). Each layer has its own common world
("model_parallel_<net>_<name>_cw"), because its four exchanges run one after another and two
layers may run at once. CPU devices only (engine GLOO); without a rendezvous the world has one rank
and meets through a file store in the temporary folder.

Initialization: each device fills the whole weight with the layer's own fill op and keeps its
rows, so the gathered weight has the fill's distribution (and a GivenTensorFill's values).

Checkpoints hold the split blobs per shard: SaveModelParallelPart / LoadModelParallelPart write
and read this shard's part (every local device's slices, with the layout to check against), and
ReadModelParallelPart and GatherModelParallelParts join the parts of all shards into whole weights
for a single-device model, as predictor_exporter exports it (docs/distributed.md).
"""
import os
import tempfile

import numpy as np

from caffe2.proto import caffe2_pb2
from caffe2.python import core, workspace
from caffe2.python.data_parallel_model_common_worlds import _CreateOrCloneCommonWorld
from caffe2.python.data_parallel_model_graph import _DevicePrefix, _InterleaveOps, stripBlobName

LAYOUT_BLOB = "model_parallel_layout"


def SplitRows(dim_out, parts):
    """Rows per part: dim_out split as evenly as possible, the first parts one more."""
    base, extra = divmod(dim_out, parts)
    return [base + (1 if g < extra else 0) for g in range(parts)]


def _Shards(rendezvous):
    if rendezvous is None:
        return 1, 0
    return rendezvous["num_shards"], rendezvous["shard_id"]


def _FillShape(op, blob):
    for arg in op.arg:
        if arg.name == "shape":
            return list(arg.ints)
    raise ValueError(
        "model_parallel_fc: {} op making '{}' has no 'shape' argument; the split needs the "
        "whole weight's shape".format(op.type, blob)
    )


def _LayerFCs(model, layer, devices):
    """{device: (index, FC op)} of the FC ops writing "<prefix>_<d>/<layer>"."""
    found = {}
    for index, op in enumerate(model.net.Proto().op):
        for d in devices:
            if op.type == "FC" and list(op.output) == [_DevicePrefix(model, d) + layer]:
                found[d] = (index, op)
    if len(found) != len(devices):
        names = sorted(
            {stripBlobName(o) for op in model.net.Proto().op if op.type == "FC" for o in op.output}
        )
        raise ValueError(
            "model_parallel_fc names '{}', but no FC op writes '{}{}' on every device; the FC "
            "layers of this model are: {}".format(
                layer, _DevicePrefix(model, devices[0]), layer, ", ".join(names) or "none"
            )
        )
    for _, op in found.values():
        args = {a.name: a for a in op.arg}
        if len(op.input) != 3:
            raise ValueError("model_parallel_fc: FC '{}' has no bias input".format(layer))
        for name in ("axis", "axis_w"):
            if name in args and args[name].i != 1:
                raise ValueError(
                    "model_parallel_fc: FC '{}' has {}={}; only 1 (the default) splits".format(
                        layer, name, args[name].i
                    )
                )
    return found


def _ModelParallelWorld(model, layer, rendezvous):
    name = "model_parallel_{}_{}_cw".format(model.net.Proto().name, layer)
    if rendezvous is not None and rendezvous["num_shards"] > 1:
        return _CreateOrCloneCommonWorld(
            model.param_init_net,
            name,
            rendezvous=rendezvous,
            status_blob="create_{}_status".format(name),
        )
    if rendezvous is not None and rendezvous.get("kv_handler"):
        store = rendezvous["kv_handler"]
    else:
        store = model.param_init_net.FileStoreHandlerCreate(
            [],
            "model_parallel_store",
            path=tempfile.gettempdir(),
            prefix="model_parallel_{}_{}".format(os.getpid(), id(model)),
        )
    return model.param_init_net.CreateCommonWorld(
        store, name, name=name + "_op", engine="GLOO", size=1, rank=0
    )


def _FindFill(model, blob):
    for index, op in enumerate(model.param_init_net.Proto().op):
        if blob in op.output:
            return index, op
    return None, None


def _DimOut(model, weight):
    """The whole weight's dim 0: from its parameter info (brew records it even without
    init_params), else from the shape of its fill op."""
    info = model._parameters_info.get(weight) if hasattr(model, "_parameters_info") else None
    if info is not None and info.shape:
        return list(info.shape)[0]
    _, op = _FindFill(model, weight)
    if op is None:
        raise ValueError(
            "model_parallel_fc: the shape of '{}' is unknown: it is not a parameter made by "
            "brew and param_init_net does not make it".format(weight)
        )
    return _FillShape(op, weight)[0]


def _SplitParamInit(model, full_name, local_name, start, rows):
    """Makes param_init_net fill `full_name` and keep rows [start, start + rows) as local_name
    (nothing to do for a model whose parameters come from another, like a test model)."""
    init = model.param_init_net.Proto()
    index, op = _FindFill(model, local_name)
    if op is None:
        return
    shape = _FillShape(op, local_name)
    op.output[list(op.output).index(local_name)] = full_name
    rest = len(shape) - 1
    keep = core.CreateOperator(
        "Slice",
        [full_name],
        [local_name],
        starts=[start] + [0] * rest,
        ends=[start + rows] + [-1] * rest,
        device_option=op.device_option,
    )
    free = core.CreateOperator("Free", [full_name], [full_name], device_option=op.device_option)
    ops = list(init.op)
    ops[index + 1 : index + 1] = [keep, free]
    del init.op[:]
    init.op.extend(ops)


def _SetupModelParallelFC(model, layers, rendezvous):
    """Rewrites the forward pass of every device so that `layers` are model parallel."""
    devices = list(model._devices)
    if model._device_type != caffe2_pb2.CPU:
        raise NotImplementedError(
            "model_parallel_fc runs on CPU devices (engine GLOO) in this release; GPU models "
            "would need NCCL exchanges"
        )
    if model._shared_model:
        raise ValueError("model_parallel_fc cannot be combined with shared_model")
    num_shards, shard_id = _Shards(rendezvous)
    k = len(devices)
    global_devices = num_shards * k
    if k > 1:
        _InterleaveOps(model)  # the FC ops of all devices become adjacent
    model._model_parallel = {}
    for layer in layers:
        fcs = _LayerFCs(model, layer, devices)
        first_op = fcs[devices[0]][1]
        weight, bias = stripBlobName(first_op.input[1]), stripBlobName(first_op.input[2])
        dim_out = _DimOut(model, first_op.input[1])
        if dim_out < global_devices:
            raise ValueError(
                "model_parallel_fc: '{}' has {} outputs, fewer than the {} devices it would be "
                "split over".format(layer, dim_out, global_devices)
            )
        rows = SplitRows(dim_out, global_devices)
        starts = np.cumsum([0] + rows).tolist()
        world = _ModelParallelWorld(model, layer, rendezvous)
        for i, d in enumerate(devices):
            g = shard_id * k + i
            prefix = _DevicePrefix(model, d)
            for param in (weight, bias):
                _SplitParamInit(model, prefix + param + "_full", prefix + param, starts[g], rows[g])
        _RewriteLayer(model, layer, fcs, devices, world, rows)
        model._model_parallel[layer] = dict(
            weight=weight, bias=bias, rows=rows, starts=starts, dim_out=dim_out
        )


def _RewriteLayer(model, layer, fcs, devices, world, rows):
    proto = model.net.Proto()
    indices = sorted(index for index, _ in fcs.values())
    gathered = "{}_mp_input".format(layer)
    first = fcs[devices[0]][1]
    new_ops = [
        core.CreateOperator(
            "AllgatherBatch",
            [world] + [fcs[d][1].input[0] for d in devices],
            [gathered],
            engine="GLOO",
            device_option=first.device_option,
        )
    ]
    columns = []
    for d in devices:
        op = caffe2_pb2.OperatorDef()
        op.CopyFrom(fcs[d][1])
        op.input[0] = gathered
        op.output[0] = _DevicePrefix(model, d) + layer + "_mp_columns"
        columns.append(op.output[0])
        new_ops.append(op)
    new_ops.append(
        core.CreateOperator(
            "ColumnShardsToBatch",
            [world] + columns,
            [fcs[d][1].output[0] for d in devices],
            engine="GLOO",
            columns=rows,
            device_option=first.device_option,
        )
    )
    if indices != list(range(indices[0], indices[0] + len(indices))):
        raise ValueError("model_parallel_fc: the FC ops of '{}' are not adjacent".format(layer))
    ops = list(proto.op)
    ops[indices[0] : indices[-1] + 1] = new_ops
    del proto.op[:]
    proto.op.extend(ops)
    if proto.external_input and str(world) not in proto.external_input:
        proto.external_input.append(str(world))  # made by param_init_net


def IsModelParallel(model):
    return bool(getattr(model, "_model_parallel", None))


def ModelParallelBlobs(model):
    """Full names of the blobs that differ per device because of the split: the split weights
    and biases, their whole-weight fills, and every blob param_init_net derives from them
    (optimizer state such as momentum)."""
    if not IsModelParallel(model):
        return set()
    split = set()
    for info in model._model_parallel.values():
        for d in model._devices:
            prefix = _DevicePrefix(model, d)
            for param in (info["weight"], info["bias"]):
                split.update([prefix + param, prefix + param + "_full"])
    for op in model.param_init_net.Proto().op:
        if any(i in split for i in op.input) and op.type != "Free":
            split.update(op.output)
    return split


def ModelParallelStateBlobs(model):
    """This shard's split blobs that belong in a checkpoint (no whole-weight fills)."""
    return sorted(b for b in ModelParallelBlobs(model) if not b.endswith("_full"))


def _Layout(model):
    """[shards, this shard, devices, rows of every split layer...]: what a part must match."""
    num_shards, shard_id = _Shards(model._rendezvous)
    layout = [num_shards, shard_id, len(model._devices)]
    for layer in sorted(model._model_parallel):
        layout += model._model_parallel[layer]["rows"]
    return np.array(layout, dtype=np.int64)


def _DescribeLayout(layout):
    return "{} shard(s) x {} device(s), rows {}".format(layout[0], layout[2], layout[3:].tolist())


def SaveModelParallelPart(model, path, db_type="minidb"):
    """Writes this shard's split blobs (and the layout) to `path` atomically."""
    workspace.FeedBlob(LAYOUT_BLOB, _Layout(model))
    temp = "{}.tmp{}".format(path, os.getpid())
    blobs = ModelParallelStateBlobs(model) + [LAYOUT_BLOB]
    workspace.RunOperatorOnce(
        core.CreateOperator("Save", blobs, [], absolute_path=1, db=temp, db_type=db_type)
    )
    os.replace(temp, path)


def LoadModelParallelPart(model, path, db_type="minidb"):
    """Reads this shard's split blobs from `path`; the layout must be this run's."""
    if not os.path.exists(path):
        raise IOError(
            "model-parallel checkpoint part {} is missing: every shard writes its own part of "
            "the split FC layers beside the checkpoint".format(path)
        )
    blobs = ModelParallelStateBlobs(model) + [LAYOUT_BLOB]
    workspace.RunOperatorOnce(
        core.CreateOperator("Load", [], blobs, absolute_path=1, db=path, db_type=db_type)
    )
    saved, expected = workspace.FetchBlob(LAYOUT_BLOB), _Layout(model)
    if not np.array_equal(saved, expected):
        raise ValueError(
            "{} was saved by shard {} of a run with {}; this is shard {} of a run with {}".format(
                path, saved[1], _DescribeLayout(saved), expected[1], _DescribeLayout(expected)
            )
        )


def GatherModelParallelParts(parts):
    """{stripped name: whole array} of every split blob, joined from the parts of all shards
    (ReadModelParallelPart's dicts, in any order): the slices in global device order, shard by
    shard, each shard's devices by id."""
    by_shard = {}
    for part in parts:
        layout = part[LAYOUT_BLOB]
        by_shard[int(layout[1])] = part
    num_shards = int(parts[0][LAYOUT_BLOB][0]) if parts else 0
    missing = sorted(set(range(num_shards)) - set(by_shard))
    if missing or len(parts) != num_shards:
        raise ValueError(
            "the parts are of shards {}; a run of {} shards needs one part of each".format(
                sorted(by_shard), num_shards
            )
        )
    joined = {}
    for shard in range(num_shards):
        slices = {}
        for full, value in by_shard[shard].items():
            if full == LAYOUT_BLOB:
                continue
            prefix, name = full.split("/", 1)
            slices.setdefault(name, []).append((int(prefix.rsplit("_", 1)[1]), value))
        for name, pieces in slices.items():
            joined.setdefault(name, []).extend(value for _, value in sorted(pieces))
    return {name: np.concatenate(pieces, axis=0) for name, pieces in joined.items()}


def ReadModelParallelPart(path, db_type="minidb"):
    """{full name: array} of a part file (with its layout under LAYOUT_BLOB), read in a scratch
    workspace."""
    current = workspace.CurrentWorkspace()
    workspace.SwitchWorkspace("model_parallel_part_reader", True)
    try:
        workspace.ResetWorkspace()
        workspace.RunOperatorOnce(
            core.CreateOperator(
                "Load", [], [], absolute_path=1, db=path, db_type=db_type, load_all=1
            )
        )
        return {b: workspace.FetchBlob(b) for b in workspace.Blobs()}
    finally:
        workspace.SwitchWorkspace(current)
