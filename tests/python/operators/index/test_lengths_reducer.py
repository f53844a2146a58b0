"""LengthsSum/Mean/WeightedSum and SparseLengthsSum/Mean/WeightedSum: references, gradients (dense
and sparse), gradient op names and bad input; device checks against the CPU kernels (empty
segments, repeated indices, int32 and int64 indices, lengths, indices and weights fed on the host
or on the GPU, large tables, the gradient ops alone and their sparse slices, the input errors)."""
import hypothesis.strategies as st
import numpy as np
import pytest
from hypothesis import given, settings

from caffe2.python import core, workspace
import caffe2.python.hypothesis_test_util as hu

from device_check import check_cpu_gpu, check_gradient_cpu_gpu, gpu, gpu_semantics, needs_gpu

COVERED_CUDA_OPS = [
    "LengthsSum",
    "LengthsMean",
    "LengthsWeightedSum",
    "SparseLengthsSum",
    "SparseLengthsMean",
    "SparseLengthsWeightedSum",
    "LengthsIndicesInGradientSumGradient",
    "LengthsMeanGradient",
    "LengthsWeightedSumGradient",
    "SparseLengthsIndicesInGradientSumGradient",
    "SparseLengthsIndicesInGradientMeanGradient",
    "SparseLengthsIndicesInGradientWeightedSumGradient",
]

CPU = core.DeviceOption(0)


def rand(*shape, seed=0):
    return np.random.RandomState(seed).randn(*shape).astype(np.float32)


def segment_ref(rows, lengths, mode, weights=None):
    out, pos = [], 0
    for l in lengths:
        seg = rows[pos : pos + l]
        if weights is not None:
            seg = seg * weights[pos : pos + l].reshape(-1, *([1] * (rows.ndim - 1)))
        r = seg.sum(axis=0) if l or mode != "mean" else np.zeros(rows.shape[1:], np.float32)
        if mode == "mean" and l:
            r = r / l
        out.append(r)
        pos += l
    return np.array(out, np.float32).reshape(len(lengths), *rows.shape[1:])


class TestLengthsReducers(hu.HypothesisTestCase):
    @given(seed=st.integers(0, 100), mode=st.sampled_from(["sum", "mean", "weighted"]))
    @settings(deadline=None, max_examples=10)
    def test_dense(self, seed, mode):
        rng = np.random.RandomState(seed)
        lengths = np.array([2, 0, 3, 1], np.int32)
        data = rng.randn(6, 2).astype(np.float32)
        w = rng.randn(6).astype(np.float32)
        if mode == "weighted":
            op = core.CreateOperator("LengthsWeightedSum", ["D", "W", "L"], ["Y"])
            inputs = [data, w, lengths]
            ref = lambda d, w, l: [segment_ref(d, l, "sum", w)]
        else:
            op = core.CreateOperator(
                "LengthsSum" if mode == "sum" else "LengthsMean", ["D", "L"], ["Y"]
            )
            inputs = [data, lengths]
            ref = lambda d, l: [segment_ref(d, l, mode)]
        self.assertReferenceChecks(CPU, op, inputs, ref)
        self.assertGradientChecks(CPU, op, inputs, 0, [0])

    @given(
        seed=st.integers(0, 100),
        mode=st.sampled_from(["sum", "mean", "weighted"]),
        idx_type=st.sampled_from([np.int32, np.int64]),
    )
    @settings(deadline=None, max_examples=10)
    def test_sparse(self, seed, mode, idx_type):
        rng = np.random.RandomState(seed)
        lengths = np.array([1, 3, 0, 2], np.int32)
        data = rng.randn(5, 3).astype(np.float32)
        idx = rng.randint(0, 5, size=6).astype(idx_type)
        w = rng.randn(6).astype(np.float32)
        if mode == "weighted":
            op = core.CreateOperator("SparseLengthsWeightedSum", ["D", "W", "I", "L"], ["Y"])
            inputs = [data, w, idx, lengths]
            ref = lambda d, w, i, l: [segment_ref(d[i], l, "sum", w)]
        else:
            op = core.CreateOperator(
                "SparseLengthsSum" if mode == "sum" else "SparseLengthsMean", ["D", "I", "L"], ["Y"]
            )
            inputs = [data, idx, lengths]
            ref = lambda d, i, l: [segment_ref(d[i], l, mode)]
        self.assertReferenceChecks(CPU, op, inputs, ref)
        self.assertGradientChecks(CPU, op, inputs, 0, [0])

    def test_gradient_defs(self):
        cases = [
            ("LengthsSum", ["D", "L"], "LengthsIndicesInGradientSumGradient", ["Y_grad", "L", "D"]),
            ("LengthsMean", ["D", "L"], "LengthsMeanGradient", ["Y_grad", "L"]),
            (
                "SparseLengthsSum",
                ["D", "I", "L"],
                "SparseLengthsIndicesInGradientSumGradient",
                ["Y_grad", "L", "I"],
            ),
        ]
        for op_type, ins, grad_type, grad_ins in cases:
            op = core.CreateOperator(op_type, ins, ["Y"])
            ops, grads = core.GradientRegistry.GetGradientForOp(op, ["Y_grad"])
            self.assertEqual(ops[0].type, grad_type)
            self.assertEqual(list(ops[0].input), grad_ins)
        self.assertEqual(grads[0].indices, "I")

    def test_bad_input(self):
        op = core.CreateOperator("LengthsSum", ["D", "L"], ["Y"])
        self.assertRunOpRaises(
            CPU,
            op,
            [rand(4, 2), np.array([1, 2], np.int32)],
            exception=RuntimeError,
            regexp=r"^\[LengthsSum\] LENGTHS add up to 3 but DATA \(4, 2\) has 4 rows",
        )
        self.assertRunOpRaises(
            CPU,
            op,
            [rand(4, 2), np.array([4], np.int64)],
            exception=RuntimeError,
            regexp=r"LENGTHS must be a 1-D int32 tensor",
        )
        op = core.CreateOperator("SparseLengthsSum", ["D", "I", "L"], ["Y"])
        self.assertRunOpRaises(
            CPU,
            op,
            [rand(4, 2), np.array([0, 9]), np.array([2], np.int32)],
            exception=RuntimeError,
            regexp=r"index 9 at position 1 out of range for DATA \(4, 2\)",
        )


HOST_OPTIONS = ["gpu", "host"]  # where the index-like inputs (lengths, indices, lr, iter) live


def f32(rng, *shape):
    return rng.randn(*shape).astype(np.float32)


def on_host(names, where):
    return {name: CPU for name in names} if where == "host" else {}


def random_lengths(rng, segments, total):
    """`segments` lengths (some 0) adding up to `total`."""
    cuts = np.sort(rng.randint(0, total + 1, segments - 1)) if segments > 1 else np.array([], int)
    bounds = np.concatenate([[0], cuts, [total]])
    return np.diff(bounds).astype(np.int32)


DENSE_REDUCERS = ["LengthsSum", "LengthsMean", "LengthsWeightedSum"]

SPARSE_REDUCERS = ["SparseLengthsSum", "SparseLengthsMean", "SparseLengthsWeightedSum"]

# (DATA trailing dims, lengths)
DENSE_CASES = [
    ((3,), [2, 0, 3]),
    ((3,), [0, 0, 0]),  # no rows at all: every segment empty
    ((2, 3), [1, 4, 0]),  # 3-D DATA
    ((1,), [5]),  # one value per row
    ((3,), []),  # no segments
    ((64,), "random200"),  # 200 segments, some empty, over 1000 rows
    ((300,), [0, 7, 1, 0]),  # rows longer than a block of threads
]


def dense_case_id(case):
    dims, lengths = case
    return (
        "x".join(map(str, dims))
        + ","
        + (lengths if isinstance(lengths, str) else "-".join(map(str, lengths)) or "none")
    )


def dense_inputs(op_type, case, rng):
    dims, lengths = case
    if lengths == "random200":
        lengths = random_lengths(rng, 200, 1000)
    lengths = np.array(lengths, np.int32)
    data = f32(rng, int(lengths.sum()), *dims)
    if op_type == "LengthsWeightedSum":
        return ["D", "W", "L"], [data, f32(rng, len(data)), lengths]
    return ["D", "L"], [data, lengths]


@needs_gpu
@pytest.mark.parametrize("where", HOST_OPTIONS)
@pytest.mark.parametrize("case", DENSE_CASES, ids=dense_case_id)
@pytest.mark.parametrize("op_type", DENSE_REDUCERS)
def test_lengths_reducer_matches_cpu(op_type, case, where):
    names, inputs = dense_inputs(op_type, case, np.random.RandomState(0))
    op = core.CreateOperator(op_type, names, ["Y"])
    check_cpu_gpu(op, inputs, rtol=1e-5, atol=1e-5, input_device_options=on_host(["L", "W"], where))


@needs_gpu
@pytest.mark.parametrize(
    "case", [c for c in DENSE_CASES if c[1] != [0, 0, 0] and c[1] != []], ids=dense_case_id
)
@pytest.mark.parametrize("op_type", DENSE_REDUCERS)
def test_lengths_reducer_gradient_matches_cpu(op_type, case):
    names, inputs = dense_inputs(op_type, case, np.random.RandomState(1))
    op = core.CreateOperator(op_type, names, ["Y"])
    check_gradient_cpu_gpu(op, inputs, rtol=1e-5, atol=1e-5)


# (table rows, table trailing dims, number of indices, segments)
SPARSE_CASES = [
    (6, (3,), 4, 2),
    (6, (3,), 0, 3),  # no indices: every segment empty
    (5, (2, 3), 7, 4),  # 3-D DATA
    (1000, (64,), 500, 64),  # a larger embedding table, indices repeated
    (50, (130,), 40, 1),  # one long segment, rows longer than ... a warp
]


def sparse_case_id(case):
    rows, dims, n, segments = case
    return "{}x{},n{},s{}".format(rows, "x".join(map(str, dims)), n, segments)


def sparse_inputs(op_type, case, index_type, rng):
    rows, dims, n, segments = case
    data = f32(rng, rows, *dims)
    indices = rng.randint(0, rows, n).astype(index_type)
    if n >= 4:
        indices[1] = indices[3]  # at least one repeat
    lengths = random_lengths(rng, segments, n)
    if op_type == "SparseLengthsWeightedSum":
        return ["D", "W", "I", "L"], [data, f32(rng, n), indices, lengths]
    return ["D", "I", "L"], [data, indices, lengths]


@needs_gpu
@pytest.mark.parametrize("where", HOST_OPTIONS)
@pytest.mark.parametrize("index_type", [np.int32, np.int64])
@pytest.mark.parametrize("case", SPARSE_CASES, ids=sparse_case_id)
@pytest.mark.parametrize("op_type", SPARSE_REDUCERS)
def test_sparse_lengths_reducer_matches_cpu(op_type, case, index_type, where):
    names, inputs = sparse_inputs(op_type, case, index_type, np.random.RandomState(2))
    op = core.CreateOperator(op_type, names, ["Y"])
    check_cpu_gpu(
        op, inputs, rtol=1e-5, atol=1e-5, input_device_options=on_host(["I", "L", "W"], where)
    )


@needs_gpu
def test_sparse_lengths_sum_matches_numpy():
    """The CPU kernel the GPU is checked against is itself the segment sum of DATA[INDICES]."""
    rng = np.random.RandomState(3)
    names, (data, indices, lengths) = sparse_inputs(
        "SparseLengthsSum", SPARSE_CASES[3], np.int64, rng
    )
    op = core.CreateOperator("SparseLengthsSum", names, ["Y"])
    (y,) = check_cpu_gpu(op, [data, indices, lengths], rtol=1e-5, atol=1e-5)
    ends = np.cumsum(lengths)
    expected = np.stack([data[indices[e - l : e]].sum(axis=0) for l, e in zip(lengths, ends)])
    np.testing.assert_allclose(y, expected, rtol=1e-4, atol=1e-4)


def check_sparse_gradient_cpu_gpu(op, inputs, input_device_options=None):
    """Runs SparseLengths* forward and its gradient op on both devices; DATA's gradient is a
    slice (INDICES, values): the values must agree, and the indices be INDICES."""
    input_device_options = input_device_options or {}
    grad_ops, input_grads = core.GradientRegistry.GetGradientForOp(op, ["Y_grad"])
    g = input_grads[0]
    assert isinstance(g, core.GradientSlice)
    workspace.ResetWorkspace()
    for name, value in zip(op.input, inputs):
        workspace.FeedBlob(name, value)
    workspace.RunOperatorOnce(op)
    dy = np.random.RandomState(4).uniform(-1, 1, workspace.FetchBlob("Y").shape).astype(np.float32)
    results = []
    for device_option in (CPU, gpu()):
        workspace.ResetWorkspace()
        for name, value in zip(op.input, inputs):
            feed_option = input_device_options.get(name, device_option)
            workspace.FeedBlob(name, value, CPU if device_option is CPU else feed_option)
        workspace.FeedBlob("Y_grad", dy, device_option)
        for o in [op] + list(grad_ops):
            workspace.RunOperatorOnce(
                core.CreateOperator(
                    o.type,
                    list(o.input),
                    list(o.output),
                    device_option=device_option,
                    arg=list(o.arg),
                )
            )
        results.append((workspace.FetchBlob(str(g.indices)), workspace.FetchBlob(str(g.values))))
    (cpu_idx, cpu_val), (gpu_idx, gpu_val) = results
    np.testing.assert_array_equal(gpu_idx, cpu_idx)
    assert gpu_val.shape == cpu_val.shape and gpu_val.dtype == cpu_val.dtype
    np.testing.assert_allclose(gpu_val, cpu_val, rtol=1e-5, atol=1e-5)
    return gpu_val, dy


@needs_gpu
@pytest.mark.parametrize("where", HOST_OPTIONS)
@pytest.mark.parametrize("index_type", [np.int32, np.int64])
@pytest.mark.parametrize("case", SPARSE_CASES, ids=sparse_case_id)
@pytest.mark.parametrize("op_type", SPARSE_REDUCERS)
def test_sparse_lengths_reducer_gradient_matches_cpu(op_type, case, index_type, where):
    names, inputs = sparse_inputs(op_type, case, index_type, np.random.RandomState(5))
    op = core.CreateOperator(op_type, names, ["Y"])
    check_sparse_gradient_cpu_gpu(op, inputs, on_host(["I", "L", "W"], where))


@needs_gpu
def test_sparse_lengths_mean_gradient_matches_numpy():
    rng = np.random.RandomState(6)
    names, inputs = sparse_inputs("SparseLengthsMean", SPARSE_CASES[3], np.int32, rng)
    op = core.CreateOperator("SparseLengthsMean", names, ["Y"])
    values, dy = check_sparse_gradient_cpu_gpu(op, inputs)
    lengths = inputs[2]
    segment = np.repeat(np.arange(len(lengths)), lengths)
    expected = dy[segment] / lengths[segment][:, None]
    np.testing.assert_allclose(values, expected, rtol=1e-5, atol=1e-6)


# The gradient ops on their own, in every input form their schemas allow.
GRADIENT_OP_CASES = [
    ("LengthsIndicesInGradientSumGradient", ["dY", "L"]),
    ("LengthsIndicesInGradientSumGradient", ["dY", "L", "D"]),
    ("LengthsMeanGradient", ["dY", "L"]),
    ("LengthsMeanGradient", ["dY", "L", "D"]),
    ("LengthsWeightedSumGradient", ["dY", "W", "L"]),
    ("LengthsWeightedSumGradient", ["dY", "W", "L", "D"]),
    ("SparseLengthsIndicesInGradientSumGradient", ["dY", "L", "I"]),
    ("SparseLengthsIndicesInGradientMeanGradient", ["dY", "L", "I"]),
    ("SparseLengthsIndicesInGradientWeightedSumGradient", ["dY", "W", "L", "I"]),
]


@needs_gpu
@pytest.mark.parametrize("where", HOST_OPTIONS)
@pytest.mark.parametrize(
    "lengths",
    [[2, 0, 3, 1], [0, 0], [], "random200"],
    ids=["some-empty", "all-empty", "none", "random200"],
)
@pytest.mark.parametrize("case", GRADIENT_OP_CASES, ids=lambda c: "{}:{}".format(c[0], len(c[1])))
def test_gradient_op_matches_cpu(case, lengths, where):
    op_type, names = case
    rng = np.random.RandomState(7)
    lengths = (
        random_lengths(rng, 200, 1000) if lengths == "random200" else np.array(lengths, np.int32)
    )
    n = int(lengths.sum())
    values = {
        "dY": f32(rng, len(lengths), 5),
        "L": lengths,
        "W": f32(rng, n),
        "D": f32(rng, n, 5),
        "I": rng.randint(0, 9, n).astype(np.int64),
    }
    op = core.CreateOperator(op_type, names, ["dX"])
    check_cpu_gpu(
        op,
        [values[name] for name in names],
        rtol=1e-6,
        atol=1e-6,
        input_device_options=on_host(["L", "W", "I"], where),
    )


@needs_gpu
@gpu_semantics
def test_out_of_range_gpu_index_is_skipped():
    """INDICES held on the GPU are not checked (that would wait for the GPU): an index out of range
    adds nothing to its segment; the mean still divides by the segment's length."""
    rng = np.random.RandomState(8)
    data = f32(rng, 6, 3)
    indices = np.array([1, 9, 2, -1, 4], np.int64)
    lengths = np.array([3, 2], np.int32)
    for op_type, scale in (("SparseLengthsSum", [1, 1]), ("SparseLengthsMean", [1 / 3, 1 / 2])):
        workspace.ResetWorkspace()
        for name, value in zip("DIL", (data, indices, lengths)):
            workspace.FeedBlob(name, value, gpu())
        workspace.RunOperatorOnce(
            core.CreateOperator(op_type, ["D", "I", "L"], ["Y"], device_option=gpu())
        )
        expected = np.stack([(data[1] + data[2]) * scale[0], data[4] * scale[1]])
        np.testing.assert_allclose(workspace.FetchBlob("Y"), expected, rtol=1e-6)


@needs_gpu
@gpu_semantics
def test_lengths_on_the_gpu_with_a_wrong_total_stay_in_bounds():
    """LENGTHS held on the GPU are not checked: rows past DATA's end are left out."""
    data = np.arange(12, dtype=np.float32).reshape(4, 3)
    workspace.ResetWorkspace()
    workspace.FeedBlob("D", data, gpu())
    workspace.FeedBlob("L", np.array([3, 5], np.int32), gpu())
    workspace.RunOperatorOnce(
        core.CreateOperator("LengthsSum", ["D", "L"], ["Y"], device_option=gpu())
    )
    np.testing.assert_allclose(workspace.FetchBlob("Y"), np.stack([data[:3].sum(0), data[3]]))


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

ERRORS = [
    (
        "LengthsSum",
        ["D", "L"],
        ["Y"],
        [F((3, 2), np.float32), I64(1, 2)],
        (),
        {},
        "LENGTHS must be a 1-D int32 tensor",
    ),
    (
        "LengthsSum",
        ["D", "L"],
        ["Y"],
        [F((3, 2), np.int32), I32(1, 2)],
        (),
        {},
        "DATA must be a float tensor",
    ),
    (
        "LengthsSum",
        ["D", "L"],
        ["Y"],
        [F((3, 2), np.float32), I32(4, -1)],
        ("L",),
        {},
        "length 1 is negative: -1",
    ),
    (
        "LengthsMean",
        ["D", "L"],
        ["Y"],
        [F((3, 2), np.float32), I32(1, 1)],
        ("L",),
        {},
        r"LENGTHS add up to 2 but DATA \(3, 2\) has 3 rows",
    ),
    (
        "LengthsWeightedSum",
        ["D", "W", "L"],
        ["Y"],
        [F((3, 2), np.float32), F(2, np.float32), I32(1, 2)],
        (),
        {},
        "SCALARS must hold 3 floats",
    ),
    (
        "SparseLengthsSum",
        ["D", "I", "L"],
        ["Y"],
        [F((3, 2), np.float32), I64(0, 2, 1), I32(2, 2)],
        ("L",),
        {},
        "LENGTHS add up to 4 but there are 3 INDICES",
    ),
    (
        "SparseLengthsSum",
        ["D", "I", "L"],
        ["Y"],
        [F((3, 2), np.float32), I64(0, 7), I32(2)],
        ("I",),
        {},
        r"index 7 at position 1 out of range for DATA \(3, 2\)",
    ),
    (
        "SparseLengthsMean",
        ["D", "I", "L"],
        ["Y"],
        [F((3, 2), np.float32), F(2, np.float32), I32(2)],
        (),
        {},
        "INDICES must be an int32 or int64 tensor",
    ),
    (
        "SparseLengthsWeightedSum",
        ["D", "W", "I", "L"],
        ["Y"],
        [F((3, 2), np.float32), F(3, np.float32), I32(0, 1), I32(2)],
        (),
        {},
        "WEIGHTS must hold 2 floats",
    ),
    (
        "LengthsMeanGradient",
        ["dY", "L"],
        ["dX"],
        [F((3, 2), np.float32), I32(1, 2)],
        (),
        {},
        r"must have one row per segment \(2\)",
    ),
    (
        "LengthsIndicesInGradientSumGradient",
        ["dY", "L", "D"],
        ["dX"],
        [F((2, 2), np.float32), I32(1, 2), F((4, 2), np.float32)],
        ("L",),
        {},
        "LENGTHS add up to 3 but",
    ),
    (
        "SparseLengthsIndicesInGradientWeightedSumGradient",
        ["dY", "W", "L", "I"],
        ["dX"],
        [F((1, 2), np.float32), F(3, np.float32), I32(2), I64(0, 1)],
        ("L",),
        {},
        "weights must hold 2 floats",
    ),
]


@needs_gpu
@pytest.mark.parametrize("case", ERRORS, ids=lambda c: "{}:{}".format(c[0], c[6][:28]))
def test_input_errors(case):
    op_type, inputs, outputs, values, host, args, message = case
    op = core.CreateOperator(op_type, inputs, outputs, **args)
    with pytest.raises(RuntimeError, match=message):
        run_on_gpu(op, values, host)
