"""Memonger: reduce the memory of a net by letting blobs whose lifetimes
do not overlap share one name (and so one tensor).

    model.net._net = memonger.share_grad_blobs(
        model.net, losses, set(model.param_to_grad.values()), "gpu_0/")

The sharing passes run in C++ (memonger_compute_blob_recycling_for_dag,
memonger_optimize_inference_net). The result is checked against the
original with verify_graph_equality and verify_inplace_blobs: every op
reads the values produced by the same ops as before, so the optimized net
computes bit-identical results. optimize_interference (pure Python)
needs networkx, imported when it is called; it lives, with its live-range
and assignment helpers, in memonger_interference, which this module
re-exports.
"""
import collections
import copy
import logging
import time

import numpy as np

from caffe2.proto import caffe2_pb2
from caffe2.python import core, workspace
from caffe2.python.memonger_interference import (  # noqa: F401
    AssignmentAlgorithm,
    LiveRange,
    Optimization,
    _get_max_size,
    _networkx,
    apply_assignments,
    compute_assignments,
    compute_assignments_dp,
    compute_assignments_greedy,
    compute_blob_assignment,
    compute_blob_assignments,
    compute_interference_graph,
    compute_ranges,
    get_memory_usage,
    get_updated_ranges,
    is_compatible,
    optimize_interference,
    topological_sort_traversal,
    topological_sort_traversal_longest_path,
    verify_assignments,
)
import caffe2.python._import_c_extension as C

log = logging.getLogger("memonger")
log.setLevel(logging.INFO)


def share_grad_blobs(
    net,
    losses,
    param_grads,
    namescope,
    dont_share_blobs=None,
    share_activations=False,
    blob_shapes=None,
):
    """Shares the gradient blobs (names ending in `_grad` under
    `namescope`, other than the parameter gradients) and, with
    share_activations, the activations. Returns the optimized NetDef; the
    caller assigns it to `net._net`."""
    if namescope != "" and not namescope.endswith("/"):
        namescope += "/"
    param_grads = set(str(p) for p in param_grads)

    def is_grad_blob(b):
        name = str(b)
        # "_<scope>..." covers the renamed extra contributions of
        # accumulated gradients.
        return (
            name.endswith("_grad")
            and (name.startswith(namescope) or name.startswith("_" + namescope))
            and name not in param_grads
        )

    def is_grad_op(op):
        for b in list(op.input) + list(op.output):
            if is_grad_blob(b):
                return True
        return False

    log.warning("NOTE: Executing memonger to optimize gradient memory")

    if not isinstance(losses, (list, tuple, set)):
        losses = [losses]
    netproto = copy.deepcopy(net.Proto())
    activations = []
    external_output = set(net.Proto().external_output)

    # An activation is an op output `b` whose op also reads `b + "_w"`.
    for op in net.Proto().op:
        for b in op.output:
            if b + "_w" in op.input and b not in external_output:
                activations.append(b)

    # The last two are kept: callers usually read them (e.g. the output).
    activations = set(activations[:-2])

    grad_op_indices = []
    for idx, op in enumerate(netproto.op):
        if is_grad_op(op):
            grad_op_indices.append(idx)

    shared_blobs = set()
    for op in net.Proto().op:
        for b in list(op.input) + list(op.output):
            if is_grad_blob(b) or (share_activations and b in activations):
                shared_blobs.add(b)
    start_time = time.time()
    optim_str = C.memonger_compute_blob_recycling_for_dag(
        netproto.SerializeToString(),
        [str(s) for s in losses],
        grad_op_indices,
        set(str(s) for s in shared_blobs),
        namescope,
        set() if dont_share_blobs is None else set(str(b) for b in dont_share_blobs),
        {}
        if blob_shapes is None
        else {str(k): [int(d) for d in v] for k, v in blob_shapes.items()},
    )

    log.info("Memonger memory optimization took {} secs".format(time.time() - start_time))

    optim = caffe2_pb2.NetDef()
    optim.ParseFromString(optim_str)
    assert verify_graph_equality(net.Proto(), optim), "Memonger graph is not equal to original."
    assert verify_inplace_blobs(net.Proto(), optim), "Inplace assignments differ in memonger net."
    return optim


def optimize_inference_for_dag(net, input_blobs, namescope=""):
    """Shares the internal blobs of an inference net (all but the inputs,
    the external inputs and outputs)."""
    netproto = copy.deepcopy(net.Proto())
    external_input = set(net.Proto().external_input)
    external_output = set(net.Proto().external_output)

    def is_activation_blob(b):
        return b not in external_input and b not in external_output

    activation_blobs = set()
    seen_as_output = set()
    ops = list(net.Proto().op)
    op_indices = [index for index, op in enumerate(net.Proto().op)]

    # Every read blob must be an external input or made earlier, and the
    # net must have no gradient ops.
    for op in ops:
        for b in op.input:
            if is_activation_blob(b):
                activation_blobs.add(b)
                if b not in seen_as_output:
                    raise AssertionError("{} not in external input".format(b))
        for b in op.output:
            if is_activation_blob(b):
                activation_blobs.add(b)
        seen_as_output = seen_as_output.union(set(op.output))
        assert (
            not op.is_gradient_op
        ), "You can only pass inference-only nets to optimize_inference_for_dag"

    start_time = time.time()
    optim_str = C.memonger_compute_blob_recycling_for_dag(
        netproto.SerializeToString(),
        [str(s) for s in input_blobs],
        op_indices,
        set(str(s) for s in activation_blobs),
        namescope,
        set(),
        {},
    )
    log.info("Memonger memory optimization took {} secs".format(time.time() - start_time))

    optim = caffe2_pb2.NetDef()
    optim.ParseFromString(optim_str)
    assert verify_graph_equality(net.Proto(), optim), "Memonger graph is not equal to original."
    assert verify_inplace_blobs(net.Proto(), optim), "Inplace assignments differ in memonger net."
    return optim


def estimate_memory_usage(protos, shapes, types, devicescope):
    """Bytes of the blobs of the given nets on `devicescope`:
    (total, by op type). `shapes`/`types` as from
    workspace.InferShapesAndTypes."""
    sizeofs = {
        caffe2_pb2.TensorProto.DOUBLE: 8,
        caffe2_pb2.TensorProto.FLOAT: 4,
        caffe2_pb2.TensorProto.FLOAT16: 2,
        caffe2_pb2.TensorProto.INT32: 4,
        caffe2_pb2.TensorProto.INT8: 1,
        caffe2_pb2.TensorProto.UINT8: 1,
        caffe2_pb2.TensorProto.UINT16: 2,
        caffe2_pb2.TensorProto.INT16: 2,
        caffe2_pb2.TensorProto.BOOL: 1,
        caffe2_pb2.TensorProto.INT64: 8,
    }

    def split_net(proto):
        ops = [
            op for op in proto.op if op.device_option == devicescope or op.type in {"Free", "Alias"}
        ]
        del proto.op[:]
        proto.op.extend(ops)
        return proto

    def num_bytes(blob):
        if blob not in shapes or blob not in types:
            log.warning("Unknown blob encountered: {}".format(blob))
            return 0
        sizeof = sizeofs[types[blob]]
        return sizeof * np.prod(shapes[blob])

    protos = [split_net(proto) for proto in protos]
    allocs_by_ops = collections.defaultdict(lambda: 0)

    # Evaluate
    current_allocated = 0
    max_allocated = 0
    total_allocated = 0
    allocated = set()
    for proto in protos:
        for op in proto.op:
            if op.type == "Free" or op.type == "Alias":
                for o in op.output:
                    if o in allocated:
                        current_allocated -= num_bytes(o)
                        allocated.remove(o)
            else:
                for output in op.output:
                    if output not in allocated:
                        nbytes = num_bytes(output)
                        total_allocated += nbytes
                        current_allocated += nbytes
                        max_allocated = max(max_allocated, current_allocated)
                        allocated.add(output)
                        allocs_by_ops[op.type] += nbytes

    return (total_allocated, max_allocated, allocs_by_ops)


def release_blobs_when_used(netproto, dont_free_blobs, selector_fun=None):
    """A copy of `netproto` with `Free([b], [b])` inserted after the last
    use of every blob the net itself creates and later reads (not external
    inputs or outputs, not in dont_free_blobs; with selector_fun, only
    blobs made by ops it accepts)."""
    dont_free_blobs = set(str(b) for b in dont_free_blobs)
    read, releasable = set(), set()
    for op in netproto.op:
        read.update(op.input)
        for b in op.output:
            if b not in read and (selector_fun is None or selector_fun(op)):
                releasable.add(b)
    releasable &= read
    releasable -= set(netproto.external_input)
    releasable -= set(netproto.external_output)
    releasable -= dont_free_blobs

    last_use = {}
    for i, op in enumerate(netproto.op):
        for b in list(op.input) + list(op.output):
            if b in releasable:
                last_use[b] = i
    free_after = collections.defaultdict(list)
    for b, i in last_use.items():
        free_after[i].append(b)

    result = caffe2_pb2.NetDef()
    result.CopyFrom(netproto)
    del result.op[:]
    for i, op in enumerate(netproto.op):
        result.op.extend([op])
        for b in sorted(free_after.get(i, [])):
            free = core.CreateOperator("Free", [core.BlobReference(b)], [core.BlobReference(b)])
            if op.HasField("device_option"):
                free.device_option.CopyFrom(op.device_option)
            result.op.extend([free])
    return result


def verify_inplace_blobs(net_a, net_b):
    """Whether the ops of the two nets have the same types and the same
    (input index, output index) in-place pairs: an optimized net must not
    add or drop in-place updates."""

    def inplace_pairs(op):
        outputs = list(op.output)
        return [(j, outputs.index(b)) for j, b in enumerate(op.input) if b in outputs]

    for op_a, op_b in zip(net_a.op, net_b.op):
        if op_a.type != op_b.type or inplace_pairs(op_a) != inplace_pairs(op_b):
            return False
    return True


def verify_graph_equality(net_a, net_b):
    """Whether the two nets compute the same thing up to blob names: the
    same op types, devices and engines in the same order, and every op
    reading its inputs from the same producing ops."""

    def producers(ops):
        result, last_writer = [], {}
        for i, op in enumerate(ops):
            result.append([last_writer[b] for b in op.input if b in last_writer])
            for b in op.output:
                last_writer[b] = i
        return result

    if len(net_a.op) != len(net_b.op):
        return False
    for op_a, op_b in zip(net_a.op, net_b.op):
        if (op_a.type, op_a.engine) != (
            op_b.type,
            op_b.engine,
        ) or op_a.device_option != op_b.device_option:
            return False
    parents_a, parents_b = producers(net_a.op), producers(net_b.op)
    for j, (a, b) in enumerate(zip(parents_a, parents_b)):
        if a != b:
            log.error("Op %d (%s) reads from ops %s instead of %s", j, net_a.op[j].type, b, a)
    return parents_a == parents_b


Statistics = collections.namedtuple("Statistics", ["baseline_nbytes", "optimized_nbytes"])


def blob_nbytes(blob):
    sz = 0
    try:
        sz = workspace.FetchBlob(blob).nbytes
    except Exception:
        log.warning("Error when fetching blob {}".format(blob))
    return sz


def compute_statistics(assignments):
    blob_bytes = {blob: blob_nbytes(blob) for assignment in assignments for (blob, _) in assignment}
    baseline_nbytes = sum(blob_bytes.values())
    optimized_nbytes = sum(
        max(blob_bytes[blob] for (blob, _) in assignment) for assignment in assignments
    )
    return Statistics(baseline_nbytes=baseline_nbytes, optimized_nbytes=optimized_nbytes)


def collect_blob_sizes(net):
    blobs = {}
    for op in net.op:
        for blob in op.input:
            blobs[blob] = blob_nbytes(blob)
        for blob in op.output:
            blobs[blob] = blob_nbytes(blob)

    return blobs


def optimize_inference_fast(net, static_blobs):
    """Shares the blobs of an inference net (all but `static_blobs` and
    the external inputs and outputs) with the C++ pass; returns a
    NetDef."""
    optim = caffe2_pb2.NetDef()
    optim_str = C.memonger_optimize_inference_net(
        net.SerializeToString(), [str(s) for s in static_blobs]
    )
    optim.ParseFromString(optim_str)
    return optim
