"""Device checks of LengthsSum/Mean/WeightedSum, SparseLengthsSum/Mean/WeightedSum and their
gradient ops against the CPU kernels: empty segments, repeated indices, int32 and int64 indices,
lengths, indices and weights fed on the host or on the GPU, large tables, the gradient ops alone and
their sparse slices, and what the GPU kernels do with indices and lengths they cannot check. The
input errors are in test_lengths_reducer_device_errors.py, the CPU references in
test_lengths_reducer.py."""
import numpy as np
import pytest

from caffe2.python import core, workspace

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
