"""Inputs shared by the device checks of the sparse optimizers (test_<op>.py of this folder and
test_sgd_ops.py): index cases with repeated rows, and each optimizer's op and inputs."""
import numpy as np

from caffe2.python import core

from device_check import CPU

HOST_OPTIONS = ["gpu", "host"]  # where the index-like inputs (lengths, indices, lr, iter) live


def f32(rng, *shape):
    return rng.randn(*shape).astype(np.float32)


def pos(rng, *shape):
    return (rng.rand(*shape) + 0.1).astype(np.float32)


def on_host(names, where):
    return {name: CPU for name in names} if where == "host" else {}


# (table rows, trailing dims, indices): indices given, or a count drawn with repeats
INDEX_CASES = [
    (6, (3,), [4, 1]),
    (6, (3,), [3, 1, 3, 3, 0, 1]),  # repeats: order matters
    (6, (3,), []),  # nothing to update
    (5, (2, 3), [4, 4, 2]),  # 3-D param
    (1000, (64,), 500),  # a larger embedding table
    (40, (300,), 60),  # rows longer than a block, many repeats
]


def index_case_id(case):
    rows, dims, idx = case
    return "{}x{},{}".format(
        rows,
        "x".join(map(str, dims)),
        idx if isinstance(idx, int) else "-".join(map(str, idx)) or "none",
    )


def case_indices(case, index_type, rng):
    rows, dims, idx = case
    if isinstance(idx, int):
        return rng.randint(0, rows, idx).astype(index_type)
    return np.array(idx, index_type)


def optimizer_inputs(op_type, case, index_type, rng, **kw):
    """(op, inputs, names of the index-like inputs that may be fed on the host)."""
    rows, dims, _ = case
    idx = case_indices(case, index_type, rng)
    param, grad = f32(rng, rows, *dims), f32(rng, len(idx), *dims)
    lr = np.array([-0.1], np.float32)
    if op_type in ("SparseAdagrad", "RowWiseSparseAdagrad"):
        moment = pos(rng, rows) if op_type.startswith("RowWise") else pos(rng, rows, *dims)
        op = core.CreateOperator(op_type, ["p", "h", "i", "g", "lr"], ["p", "h"], **kw)
        return op, [param, moment, idx, grad, lr], ["i", "lr"]
    if op_type in ("SparseAdam", "RowWiseSparseAdam"):
        m2 = pos(rng, rows) if op_type.startswith("RowWise") else pos(rng, rows, *dims)
        op = core.CreateOperator(
            op_type, ["p", "m1", "m2", "i", "g", "lr", "it"], ["p", "m1", "m2"], **kw
        )
        return (
            op,
            [param, f32(rng, rows, *dims), m2, idx, grad, lr, np.array([4], np.int64)],
            ["i", "lr", "it"],
        )
    if op_type == "SparseMomentumSGDUpdate":
        op = core.CreateOperator(op_type, ["g", "m", "lr", "p", "i"], ["g_out", "m", "p"], **kw)
        return (
            op,
            [grad, f32(rng, rows, *dims), np.array([0.1], np.float32), param, idx],
            ["i", "lr"],
        )
    assert op_type == "ScatterWeightedSum"
    pairs = kw.pop("pairs", 1)
    names, inputs = ["X", "w0", "i"], [param, np.array([0.9], np.float32), idx]
    for j in range(pairs):
        names += ["s%d" % j, "w%d" % (j + 1)]
        inputs += [f32(rng, len(idx), *dims), np.array([0.5 + j], np.float32)]
    op = core.CreateOperator(op_type, names, ["X"], **kw)
    return op, inputs, ["i"] + [n for n in names if n.startswith("w")]
