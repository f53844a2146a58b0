"""Checks over several optimizer ops together: no gradient for any update op; device checks of the
dense adaptive updates (Adam, Adagrad, RmsProp) in place, of the sparse optimizers over index
cases (repeated rows, int32/int64 indices, index-like inputs on the host or the GPU), of
out-of-range GPU indices, and of the input errors (the CUDA ops refuse what the CPU ops refuse,
with the same messages). Each op's own checks are in its test_<op>.py."""
import numpy as np
import pytest

from caffe2.proto import caffe2_pb2
from caffe2.python import core, workspace
import caffe2.python.hypothesis_test_util as hu

from device_check import check_cpu_gpu, gpu, gpu_semantics, needs_gpu
from sparse_optimizer_inputs import (
    HOST_OPTIONS,
    INDEX_CASES,
    index_case_id,
    on_host,
    optimizer_inputs,
)

COVERED_CUDA_OPS = [
    "Adam",
    "Adagrad",
    "RmsProp",
    "SparseAdagrad",
    "RowWiseSparseAdagrad",
    "SparseAdam",
    "RowWiseSparseAdam",
    "SparseMomentumSGDUpdate",
    "ScatterWeightedSum",
    "WeightedSumGradient",
]

CPU = core.DeviceOption(0)


class TestMomentumSGD(hu.HypothesisTestCase):
    def test_no_gradient(self):
        for op_type, ins, outs in [
            ("MomentumSGDUpdate", ["g", "m", "lr", "p"], ["g", "m", "p"]),
            ("Adam", ["p", "m1", "m2", "g", "lr", "it"], ["p", "m1", "m2"]),
            ("Adagrad", ["p", "h", "g", "lr"], ["p", "h"]),
            ("RmsProp", ["g", "ms", "mom", "lr"], ["g", "ms", "mom"]),
        ]:
            op = core.CreateOperator(op_type, ins, outs)
            with self.assertRaisesRegex(Exception, "should not have a gradient"):
                core.GradientRegistry.GetGradientForOp(op, [o + "_grad" for o in outs])


HOST = caffe2_pb2.DeviceOption()


@needs_gpu
@pytest.mark.parametrize("lr_on_host", [False, True])
def test_adaptive_updates_in_place(lr_on_host):
    rng = np.random.RandomState(7)
    p, m1, g = (rng.randn(300).astype(np.float32) for _ in range(3))
    m2 = rng.rand(300).astype(np.float32)
    lr = np.array([-0.01], np.float32)
    it = np.array([41], np.int64)
    host = {"lr": HOST} if lr_on_host else {}
    check_cpu_gpu(
        core.CreateOperator(
            "Adam", ["p", "m1", "m2", "g", "lr", "it"], ["p", "m1", "m2"], beta1=0.8, epsilon=1e-4
        ),
        [p, m1, m2, g, lr, it],
        rtol=1e-5,
        atol=1e-6,
        input_device_options=dict(host, it=HOST),
    )
    check_cpu_gpu(
        core.CreateOperator("Adagrad", ["p", "m2", "g", "lr"], ["p", "m2"], decay=0.9),
        [p, m2, g, lr],
        rtol=1e-5,
        atol=1e-6,
        input_device_options=host,
    )
    check_cpu_gpu(
        core.CreateOperator("RmsProp", ["g", "m2", "m1", "lr"], ["g", "m2", "m1"], momentum=0.5),
        [g, m2, m1, lr],
        rtol=1e-5,
        atol=1e-6,
        input_device_options=host,
    )


OPTIMIZERS = [
    ("SparseAdagrad", {}),
    ("SparseAdagrad", dict(epsilon=1e-3, decay=0.9)),
    ("RowWiseSparseAdagrad", {}),
    ("RowWiseSparseAdagrad", dict(epsilon=1e-3, decay=0.9)),
    ("SparseAdam", {}),
    ("SparseAdam", dict(beta1=0.8, beta2=0.99, epsilon=1e-3)),
    ("RowWiseSparseAdam", {}),
    ("SparseMomentumSGDUpdate", dict(momentum=0.9)),
    ("SparseMomentumSGDUpdate", dict(momentum=0.9, nesterov=1)),
    ("ScatterWeightedSum", {}),
    ("ScatterWeightedSum", dict(pairs=3)),
]


def optimizer_id(opt):
    op_type, kw = opt
    return op_type + "".join(",{}={}".format(k, v) for k, v in sorted(kw.items()))


@needs_gpu
@pytest.mark.parametrize("where", HOST_OPTIONS)
@pytest.mark.parametrize("index_type", [np.int32, np.int64])
@pytest.mark.parametrize("case", INDEX_CASES, ids=index_case_id)
@pytest.mark.parametrize("opt", OPTIMIZERS, ids=optimizer_id)
def test_sparse_optimizer_matches_cpu(opt, case, index_type, where):
    op_type, kw = opt
    op, inputs, host_names = optimizer_inputs(
        op_type, case, index_type, np.random.RandomState(9), **dict(kw)
    )
    check_cpu_gpu(op, inputs, rtol=1e-5, atol=1e-5, input_device_options=on_host(host_names, where))


@needs_gpu
@gpu_semantics
def test_out_of_range_gpu_index_updates_nothing():
    """Indices held on the GPU are not checked: an out-of-range one updates no row (the others
    update as on the CPU without it; SparseMomentumSGDUpdate writes 0 to its grad_out row)."""
    rng = np.random.RandomState(14)
    for op_type in (
        "SparseAdagrad",
        "RowWiseSparseAdagrad",
        "SparseAdam",
        "RowWiseSparseAdam",
        "ScatterWeightedSum",
        "SparseMomentumSGDUpdate",
    ):
        op, inputs, _ = optimizer_inputs(
            op_type,
            (6, (3,), [4, 1, 4]),
            np.int64,
            rng,
            **({"momentum": 0.9} if op_type == "SparseMomentumSGDUpdate" else {}),
        )
        names = list(op.input)
        i_at = names.index("i")
        bad = [np.array(x, copy=True) for x in inputs]
        bad[i_at] = np.array([4, 6, 4], np.int64)  # 6 is out of range
        good = [np.array(x, copy=True) for x in inputs]
        good[i_at] = np.array([4, 4], np.int64)
        for j, name in enumerate(names):  # drop position 1 of every per-index input
            if name in ("g", "s0"):
                good[j] = np.delete(good[j], 1, axis=0)
        workspace.ResetWorkspace()
        for name, value in zip(names, good):
            workspace.FeedBlob(name, value)
        workspace.RunOperatorOnce(op)
        expected = [workspace.FetchBlob(o) for o in op.output]
        workspace.ResetWorkspace()
        for name, value in zip(names, bad):
            workspace.FeedBlob(name, value, gpu())
        workspace.RunOperatorOnce(
            core.CreateOperator(
                op.type, names, list(op.output), device_option=gpu(), arg=list(op.arg)
            )
        )
        actual = [workspace.FetchBlob(o) for o in op.output]
        for o, a, e in zip(op.output, actual, expected):
            if o == "g_out":
                np.testing.assert_array_equal(a[1], 0)
                a, e = np.delete(a, 1, axis=0), e
            np.testing.assert_allclose(a, e, rtol=1e-6, atol=1e-6, err_msg=op_type + " " + o)


# Input errors: the CUDA ops refuse what the CPU ops refuse, with the same messages. Inputs named
# in `host` are fed on the host (checks of values are only possible there).
def run_on_gpu(op, inputs, host=()):
    op = core.CreateOperator(
        op.type, list(op.input), list(op.output), device_option=gpu(), arg=list(op.arg)
    )
    workspace.ResetWorkspace()
    for name, value in zip(op.input, inputs):
        workspace.FeedBlob(name, value, CPU if name in host else gpu())
    workspace.RunOperatorOnce(op)


F = np.zeros

I32 = lambda *v: np.array(v, np.int32)  # noqa: E731

I64 = lambda *v: np.array(v, np.int64)  # noqa: E731

LR = np.array([0.1], np.float32)

ERRORS = [
    (
        "SparseAdagrad",
        ["p", "h", "i", "g", "lr"],
        ["p", "h"],
        [F((6, 3), np.float32), F((6, 3), np.float32), I64(4, 9), F((2, 3), np.float32), LR],
        ("i",),
        {},
        "index 9 at position 1 out of range for 6 rows",
    ),
    (
        "SparseAdagrad",
        ["p", "h", "i", "g", "lr"],
        ["p", "h"],
        [F((6, 3), np.float32), F((6, 3), np.float32), I64(4, 1), F((3, 3), np.float32), LR],
        (),
        {},
        "must hold 2 rows of 3 values",
    ),
    (
        "SparseAdagrad",
        ["p", "h", "i", "g", "lr"],
        ["p", "h"],
        [F((6, 3), np.float32), F((6, 3), np.float32), F(2, np.float32), F((2, 3), np.float32), LR],
        (),
        {},
        "indices must be int32 or int64",
    ),
    (
        "RowWiseSparseAdagrad",
        ["p", "h", "i", "g", "lr"],
        ["p", "h"],
        [F((6, 3), np.float32), F(5, np.float32), I64(4, 1), F((2, 3), np.float32), LR],
        (),
        {},
        "must hold one value per row of param",
    ),
    (
        "SparseAdagrad",
        ["p", "h", "i", "g", "lr"],
        ["p", "h"],
        [
            F((6, 3), np.float32),
            F((6, 3), np.float32),
            I64(4, 1),
            F((2, 3), np.float32),
            np.array([1, 2], np.float32),
        ],
        ("lr",),
        {},
        "lr must be a one-element float tensor",
    ),
    (
        "SparseAdam",
        ["p", "m1", "m2", "i", "g", "lr", "it"],
        ["p", "m1", "m2"],
        [
            F((6, 3), np.float32),
            F((6, 3), np.float32),
            F((6, 3), np.float32),
            I64(4, 1),
            F((2, 3), np.float32),
            LR,
            I32(3),
        ],
        ("it",),
        {},
        "iter must be a one-element int64 tensor",
    ),
    (
        "RowWiseSparseAdam",
        ["p", "m1", "m2", "i", "g", "lr", "it"],
        ["p", "m1", "m2"],
        [
            F((6, 3), np.float32),
            F((6, 3), np.float32),
            F((6, 3), np.float32),
            I64(4, 1),
            F((2, 3), np.float32),
            LR,
            I64(3),
        ],
        ("it",),
        {},
        "m2 .* must hold one value per row",
    ),
    (
        "SparseMomentumSGDUpdate",
        ["g", "m", "lr", "p", "i"],
        ["g", "m", "p"],
        [F((2, 3), np.float32), F((6, 3), np.float32), LR, F((5, 3), np.float32), I64(4, 1)],
        (),
        {},
        "moment .* and param .* must have the same shape",
    ),
    (
        "ScatterWeightedSum",
        ["X", "w0", "i", "s", "w1"],
        ["X"],
        [F((6, 3), np.float32), LR, I64(4, 1), F((2, 3), np.float32), I32(2)],
        (),
        {},
        "weight 4 must be a one-element float tensor",
    ),
    (
        "ScatterWeightedSum",
        ["X", "w0", "i", "s", "w1"],
        ["X"],
        [F((6, 3), np.float32), LR, I64(4, 1), F((3, 3), np.float32), LR],
        (),
        {},
        "slices input 3 .* must hold 2 rows of 3 values",
    ),
    (
        "WeightedSumGradient",
        ["dY", "X0", "w0"],
        ["dX0", "dw0"],
        [F((2, 3), np.float32), F((2, 3), np.float32), LR],
        (),
        {},
        "expected 1 outputs, got 2",
    ),
    (
        "WeightedSumGradient",
        ["dY", "X0", "w0"],
        ["dX0"],
        [F((2, 3), np.float32), F((2, 3), np.float32), F(2, np.float32)],
        (),
        {},
        "weight 2 must be a 1-element float tensor",
    ),
]


@needs_gpu
@pytest.mark.parametrize("case", ERRORS, ids=lambda c: "{}:{}".format(c[0], c[6][:28]))
def test_input_errors(case):
    op_type, inputs, outputs, values, host, args, message = case
    op = core.CreateOperator(op_type, inputs, outputs, **args)
    with pytest.raises(RuntimeError, match=message):
        run_on_gpu(op, values, host)
