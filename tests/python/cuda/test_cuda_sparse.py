"""Device checks of the CUDA segment reductions (operators/index/lengths_reducer_op.cu), the sparse
optimizers (operators/sgd/sparse_sgd_op.cu) and WeightedSumGradient (weighted_sum_op.cu) against
the CPU kernels: empty segments, repeated indices (the optimizers apply a repeated row once per
occurrence, in order), int32 and int64 indices, indices, lengths, lr and weights fed on the host or
on the GPU, large embedding tables, the row-wise variants, the gradients (dense, and the sparse
slices of SparseLengths*), and the input errors (the same checks and messages as the CPU ops)."""
import numpy as np
import pytest

from caffe2.python import core, workspace

from cuda_test_util import CPU, check_cpu_gpu, check_gradient_cpu_gpu, gpu, gpu_semantics, needs_gpu

COVERED_OPS = [
    "LengthsSum", "LengthsMean", "LengthsWeightedSum",
    "SparseLengthsSum", "SparseLengthsMean", "SparseLengthsWeightedSum",
    "LengthsIndicesInGradientSumGradient", "LengthsMeanGradient", "LengthsWeightedSumGradient",
    "SparseLengthsIndicesInGradientSumGradient", "SparseLengthsIndicesInGradientMeanGradient",
    "SparseLengthsIndicesInGradientWeightedSumGradient",
    "SparseMomentumSGDUpdate", "ScatterWeightedSum", "SparseAdagrad", "RowWiseSparseAdagrad",
    "SparseAdam", "RowWiseSparseAdam", "WeightedSumGradient",
]

pytestmark = needs_gpu

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


# ---------------------------------------------------------------------------------------------
# Segment reductions

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
    return "x".join(map(str, dims)) + "," + (lengths if isinstance(lengths, str) else
                                               "-".join(map(str, lengths)) or "none")


def dense_inputs(op_type, case, rng):
    dims, lengths = case
    if lengths == "random200":
        lengths = random_lengths(rng, 200, 1000)
    lengths = np.array(lengths, np.int32)
    data = f32(rng, int(lengths.sum()), *dims)
    if op_type == "LengthsWeightedSum":
        return ["D", "W", "L"], [data, f32(rng, len(data)), lengths]
    return ["D", "L"], [data, lengths]


@pytest.mark.parametrize("where", HOST_OPTIONS)
@pytest.mark.parametrize("case", DENSE_CASES, ids=dense_case_id)
@pytest.mark.parametrize("op_type", DENSE_REDUCERS)
def test_lengths_reducer_matches_cpu(op_type, case, where):
    names, inputs = dense_inputs(op_type, case, np.random.RandomState(0))
    op = core.CreateOperator(op_type, names, ["Y"])
    check_cpu_gpu(op, inputs, rtol=1e-5, atol=1e-5,
                  input_device_options=on_host(["L", "W"], where))


@pytest.mark.parametrize("case", [c for c in DENSE_CASES if c[1] != [0, 0, 0] and c[1] != []],
                         ids=dense_case_id)
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


@pytest.mark.parametrize("where", HOST_OPTIONS)
@pytest.mark.parametrize("index_type", [np.int32, np.int64])
@pytest.mark.parametrize("case", SPARSE_CASES, ids=sparse_case_id)
@pytest.mark.parametrize("op_type", SPARSE_REDUCERS)
def test_sparse_lengths_reducer_matches_cpu(op_type, case, index_type, where):
    names, inputs = sparse_inputs(op_type, case, index_type, np.random.RandomState(2))
    op = core.CreateOperator(op_type, names, ["Y"])
    check_cpu_gpu(op, inputs, rtol=1e-5, atol=1e-5,
                  input_device_options=on_host(["I", "L", "W"], where))


def test_sparse_lengths_sum_matches_numpy():
    """The CPU kernel the GPU is checked against is itself the segment sum of DATA[INDICES]."""
    rng = np.random.RandomState(3)
    names, (data, indices, lengths) = sparse_inputs("SparseLengthsSum", SPARSE_CASES[3], np.int64,
                                                    rng)
    op = core.CreateOperator("SparseLengthsSum", names, ["Y"])
    (y,) = check_cpu_gpu(op, [data, indices, lengths], rtol=1e-5, atol=1e-5)
    ends = np.cumsum(lengths)
    expected = np.stack([data[indices[e - l:e]].sum(axis=0) for l, e in zip(lengths, ends)])
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
            workspace.RunOperatorOnce(core.CreateOperator(
                o.type, list(o.input), list(o.output), device_option=device_option,
                arg=list(o.arg)))
        results.append((workspace.FetchBlob(str(g.indices)), workspace.FetchBlob(str(g.values))))
    (cpu_idx, cpu_val), (gpu_idx, gpu_val) = results
    np.testing.assert_array_equal(gpu_idx, cpu_idx)
    assert gpu_val.shape == cpu_val.shape and gpu_val.dtype == cpu_val.dtype
    np.testing.assert_allclose(gpu_val, cpu_val, rtol=1e-5, atol=1e-5)
    return gpu_val, dy


@pytest.mark.parametrize("where", HOST_OPTIONS)
@pytest.mark.parametrize("index_type", [np.int32, np.int64])
@pytest.mark.parametrize("case", SPARSE_CASES, ids=sparse_case_id)
@pytest.mark.parametrize("op_type", SPARSE_REDUCERS)
def test_sparse_lengths_reducer_gradient_matches_cpu(op_type, case, index_type, where):
    names, inputs = sparse_inputs(op_type, case, index_type, np.random.RandomState(5))
    op = core.CreateOperator(op_type, names, ["Y"])
    check_sparse_gradient_cpu_gpu(op, inputs, on_host(["I", "L", "W"], where))


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


@pytest.mark.parametrize("where", HOST_OPTIONS)
@pytest.mark.parametrize("lengths", [[2, 0, 3, 1], [0, 0], [], "random200"],
                         ids=["some-empty", "all-empty", "none", "random200"])
@pytest.mark.parametrize("case", GRADIENT_OP_CASES, ids=lambda c: "{}:{}".format(c[0], len(c[1])))
def test_gradient_op_matches_cpu(case, lengths, where):
    op_type, names = case
    rng = np.random.RandomState(7)
    lengths = random_lengths(rng, 200, 1000) if lengths == "random200" else np.array(lengths,
                                                                                      np.int32)
    n = int(lengths.sum())
    values = {"dY": f32(rng, len(lengths), 5), "L": lengths, "W": f32(rng, n),
              "D": f32(rng, n, 5), "I": rng.randint(0, 9, n).astype(np.int64)}
    op = core.CreateOperator(op_type, names, ["dX"])
    check_cpu_gpu(op, [values[name] for name in names], rtol=1e-6, atol=1e-6,
                  input_device_options=on_host(["L", "W", "I"], where))


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
        workspace.RunOperatorOnce(core.CreateOperator(op_type, ["D", "I", "L"], ["Y"],
                                                      device_option=gpu()))
        expected = np.stack([(data[1] + data[2]) * scale[0], data[4] * scale[1]])
        np.testing.assert_allclose(workspace.FetchBlob("Y"), expected, rtol=1e-6)


@gpu_semantics
def test_lengths_on_the_gpu_with_a_wrong_total_stay_in_bounds():
    """LENGTHS held on the GPU are not checked: rows past DATA's end are left out."""
    data = np.arange(12, dtype=np.float32).reshape(4, 3)
    workspace.ResetWorkspace()
    workspace.FeedBlob("D", data, gpu())
    workspace.FeedBlob("L", np.array([3, 5], np.int32), gpu())
    workspace.RunOperatorOnce(core.CreateOperator("LengthsSum", ["D", "L"], ["Y"],
                                                  device_option=gpu()))
    np.testing.assert_allclose(workspace.FetchBlob("Y"), np.stack([data[:3].sum(0), data[3]]))


# ---------------------------------------------------------------------------------------------
# Sparse optimizers

def pos(rng, *shape):
    return (rng.rand(*shape) + 0.1).astype(np.float32)


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
    return "{}x{},{}".format(rows, "x".join(map(str, dims)),
                             idx if isinstance(idx, int) else "-".join(map(str, idx)) or "none")


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
        op = core.CreateOperator(op_type, ["p", "m1", "m2", "i", "g", "lr", "it"],
                                 ["p", "m1", "m2"], **kw)
        return (op, [param, f32(rng, rows, *dims), m2, idx, grad, lr, np.array([4], np.int64)],
                ["i", "lr", "it"])
    if op_type == "SparseMomentumSGDUpdate":
        op = core.CreateOperator(op_type, ["g", "m", "lr", "p", "i"], ["g_out", "m", "p"], **kw)
        return op, [grad, f32(rng, rows, *dims), np.array([0.1], np.float32), param, idx], \
            ["i", "lr"]
    assert op_type == "ScatterWeightedSum"
    pairs = kw.pop("pairs", 1)
    names, inputs = ["X", "w0", "i"], [param, np.array([0.9], np.float32), idx]
    for j in range(pairs):
        names += ["s%d" % j, "w%d" % (j + 1)]
        inputs += [f32(rng, len(idx), *dims), np.array([0.5 + j], np.float32)]
    op = core.CreateOperator(op_type, names, ["X"], **kw)
    return op, inputs, ["i"] + [n for n in names if n.startswith("w")]


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


@pytest.mark.parametrize("where", HOST_OPTIONS)
@pytest.mark.parametrize("index_type", [np.int32, np.int64])
@pytest.mark.parametrize("case", INDEX_CASES, ids=index_case_id)
@pytest.mark.parametrize("opt", OPTIMIZERS, ids=optimizer_id)
def test_sparse_optimizer_matches_cpu(opt, case, index_type, where):
    op_type, kw = opt
    op, inputs, host_names = optimizer_inputs(op_type, case, index_type,
                                              np.random.RandomState(9), **dict(kw))
    check_cpu_gpu(op, inputs, rtol=1e-5, atol=1e-5,
                  input_device_options=on_host(host_names, where))


def test_adam_iteration_counter_on_the_gpu():
    """iter fed on the GPU is read on the host (copied) for the bias correction."""
    for op_type in ("SparseAdam", "RowWiseSparseAdam"):
        op, inputs, _ = optimizer_inputs(op_type, INDEX_CASES[1], np.int64,
                                         np.random.RandomState(10))
        check_cpu_gpu(op, inputs, rtol=1e-5, atol=1e-5)


def test_repeated_rows_apply_in_order_like_numpy():
    """SparseAdagrad and RowWiseSparseAdagrad with repeated rows against a sequential numpy
    reference: the GPU must reproduce the CPU's in-order application."""
    rng = np.random.RandomState(11)
    idx = np.array([2, 0, 2, 2, 5, 0], np.int32)
    for op_type in ("SparseAdagrad", "RowWiseSparseAdagrad"):
        op, inputs, _ = optimizer_inputs(op_type, (6, (4,), list(idx)), np.int32, rng)
        p, h, _, g, lr = [np.array(x, np.float64) for x in inputs]
        for k, r in enumerate(idx):
            if op_type == "SparseAdagrad":
                h[r] += g[k] ** 2
                p[r] += lr[0] * g[k] / (np.sqrt(h[r]) + 1e-5)
            else:
                h[r] += np.mean(g[k] ** 2)
                p[r] += lr[0] * g[k] / (np.sqrt(h[r]) + 1e-5)
        p_gpu, h_gpu = check_cpu_gpu(op, inputs, rtol=1e-5, atol=1e-5)
        np.testing.assert_allclose(p_gpu, p, rtol=1e-5, atol=1e-5)
        np.testing.assert_allclose(h_gpu, h, rtol=1e-5, atol=1e-5)


def test_momentum_repeated_rows_like_numpy():
    rng = np.random.RandomState(12)
    idx = [1, 3, 1, 1]
    op, inputs, _ = optimizer_inputs("SparseMomentumSGDUpdate", (5, (3,), idx), np.int64, rng,
                                     momentum=0.9)
    g, m, lr, p, _ = [np.array(x, np.float64) for x in inputs]
    g_out = np.zeros_like(g)
    for k, r in enumerate(idx):
        step = lr[0] * g[k] + 0.9 * m[r]
        m[r] = step
        p[r] -= step
        g_out[k] = step
    out = check_cpu_gpu(op, inputs, rtol=1e-5, atol=1e-5)
    for actual, expected in zip(out, (g_out, m, p)):
        np.testing.assert_allclose(actual, expected, rtol=1e-5, atol=1e-5)


def test_scatter_weighted_sum_repeated_rows_like_numpy():
    rng = np.random.RandomState(13)
    idx = [0, 2, 0]
    op, inputs, _ = optimizer_inputs("ScatterWeightedSum", (4, (3,), idx), np.int32, rng, pairs=2)
    x = np.array(inputs[0], np.float64)
    w0, s0, w1, s1, w2 = inputs[1][0], inputs[3], inputs[4][0], inputs[5], inputs[6][0]
    for k, r in enumerate(idx):
        x[r] = w0 * x[r] + w1 * s0[k] + w2 * s1[k]
    (out,) = check_cpu_gpu(op, inputs, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(out, x, rtol=1e-5, atol=1e-5)


@gpu_semantics
def test_out_of_range_gpu_index_updates_nothing():
    """Indices held on the GPU are not checked: an out-of-range one updates no row (the others
    update as on the CPU without it; SparseMomentumSGDUpdate writes 0 to its grad_out row)."""
    rng = np.random.RandomState(14)
    for op_type in ("SparseAdagrad", "RowWiseSparseAdagrad", "SparseAdam", "RowWiseSparseAdam",
                    "ScatterWeightedSum", "SparseMomentumSGDUpdate"):
        op, inputs, _ = optimizer_inputs(op_type, (6, (3,), [4, 1, 4]), np.int64, rng,
                                         **({"momentum": 0.9}
                                            if op_type == "SparseMomentumSGDUpdate" else {}))
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
        workspace.RunOperatorOnce(core.CreateOperator(op.type, names, list(op.output),
                                                      device_option=gpu(), arg=list(op.arg)))
        actual = [workspace.FetchBlob(o) for o in op.output]
        for o, a, e in zip(op.output, actual, expected):
            if o == "g_out":
                np.testing.assert_array_equal(a[1], 0)
                a, e = np.delete(a, 1, axis=0), e
            np.testing.assert_allclose(a, e, rtol=1e-6, atol=1e-6, err_msg=op_type + " " + o)


# ---------------------------------------------------------------------------------------------
# WeightedSumGradient

@pytest.mark.parametrize("where", HOST_OPTIONS)
@pytest.mark.parametrize("grad_on_w", [0, 1])
@pytest.mark.parametrize("shape", [(3, 2), (0, 4), (1000, 300)], ids=["3x2", "empty", "1000x300"])
@pytest.mark.parametrize("pairs", [1, 3])
def test_weighted_sum_gradient_matches_cpu(pairs, shape, grad_on_w, where):
    rng = np.random.RandomState(15)
    names, inputs = ["dY"], [f32(rng, *shape)]
    for j in range(pairs):
        names += ["X%d" % j, "w%d" % j]
        inputs += [f32(rng, *shape), np.array([0.5 - j], np.float32)]
    outputs = ["dX%d" % j for j in range(pairs)] + (["dw%d" % j for j in range(pairs)]
                                                    if grad_on_w else [])
    op = core.CreateOperator("WeightedSumGradient", names, outputs, grad_on_w=grad_on_w)
    # dw sums up to 300000 products: float-sized differences of the double sums' roundings
    check_cpu_gpu(op, inputs, rtol=1e-5, atol=1e-4,
                  input_device_options=on_host([n for n in names if n.startswith("w")], where))


@pytest.mark.parametrize("grad_on_w", [0, 1])
def test_weighted_sum_gradient_through_the_registry(grad_on_w):
    rng = np.random.RandomState(16)
    inputs = [f32(rng, 4, 5), np.array([0.3], np.float32), f32(rng, 4, 5),
              np.array([-2.0], np.float32)]
    op = core.CreateOperator("WeightedSum", ["X0", "w0", "X1", "w1"], ["Y"], grad_on_w=grad_on_w)
    check_gradient_cpu_gpu(op, inputs, rtol=1e-5, atol=1e-5)


# ---------------------------------------------------------------------------------------------
# Input errors: the CUDA ops refuse what the CPU ops refuse, with the same messages. Inputs named
# in `host` are fed on the host (checks of values are only possible there).

def run_on_gpu(op, inputs, host=()):
    op = core.CreateOperator(op.type, list(op.input), list(op.output), device_option=gpu(),
                             arg=list(op.arg))
    workspace.ResetWorkspace()
    for name, value in zip(op.input, inputs):
        workspace.FeedBlob(name, value, CPU if name in host else gpu())
    workspace.RunOperatorOnce(op)


F = np.zeros
I32 = lambda *v: np.array(v, np.int32)  # noqa: E731
I64 = lambda *v: np.array(v, np.int64)  # noqa: E731
LR = np.array([0.1], np.float32)

ERRORS = [
    ("LengthsSum", ["D", "L"], ["Y"], [F((3, 2), np.float32), I64(1, 2)], (), {},
     "LENGTHS must be a 1-D int32 tensor"),
    ("LengthsSum", ["D", "L"], ["Y"], [F((3, 2), np.int32), I32(1, 2)], (), {},
     "DATA must be a float tensor"),
    ("LengthsSum", ["D", "L"], ["Y"], [F((3, 2), np.float32), I32(4, -1)], ("L",), {},
     "length 1 is negative: -1"),
    ("LengthsMean", ["D", "L"], ["Y"], [F((3, 2), np.float32), I32(1, 1)], ("L",), {},
     r"LENGTHS add up to 2 but DATA \(3, 2\) has 3 rows"),
    ("LengthsWeightedSum", ["D", "W", "L"], ["Y"], [F((3, 2), np.float32), F(2, np.float32),
                                                     I32(1, 2)], (), {},
     "SCALARS must hold 3 floats"),
    ("SparseLengthsSum", ["D", "I", "L"], ["Y"], [F((3, 2), np.float32), I64(0, 2, 1), I32(2, 2)],
     ("L",), {}, "LENGTHS add up to 4 but there are 3 INDICES"),
    ("SparseLengthsSum", ["D", "I", "L"], ["Y"], [F((3, 2), np.float32), I64(0, 7), I32(2)],
     ("I",), {}, r"index 7 at position 1 out of range for DATA \(3, 2\)"),
    ("SparseLengthsMean", ["D", "I", "L"], ["Y"], [F((3, 2), np.float32), F(2, np.float32),
                                                   I32(2)], (), {},
     "INDICES must be an int32 or int64 tensor"),
    ("SparseLengthsWeightedSum", ["D", "W", "I", "L"], ["Y"],
     [F((3, 2), np.float32), F(3, np.float32), I32(0, 1), I32(2)], (), {},
     "WEIGHTS must hold 2 floats"),
    ("LengthsMeanGradient", ["dY", "L"], ["dX"], [F((3, 2), np.float32), I32(1, 2)], (), {},
     r"must have one row per segment \(2\)"),
    ("LengthsIndicesInGradientSumGradient", ["dY", "L", "D"], ["dX"],
     [F((2, 2), np.float32), I32(1, 2), F((4, 2), np.float32)], ("L",), {},
     "LENGTHS add up to 3 but"),
    ("SparseLengthsIndicesInGradientWeightedSumGradient", ["dY", "W", "L", "I"], ["dX"],
     [F((1, 2), np.float32), F(3, np.float32), I32(2), I64(0, 1)], ("L",), {},
     "weights must hold 2 floats"),
    ("SparseAdagrad", ["p", "h", "i", "g", "lr"], ["p", "h"],
     [F((6, 3), np.float32), F((6, 3), np.float32), I64(4, 9), F((2, 3), np.float32), LR],
     ("i",), {}, "index 9 at position 1 out of range for 6 rows"),
    ("SparseAdagrad", ["p", "h", "i", "g", "lr"], ["p", "h"],
     [F((6, 3), np.float32), F((6, 3), np.float32), I64(4, 1), F((3, 3), np.float32), LR],
     (), {}, "must hold 2 rows of 3 values"),
    ("SparseAdagrad", ["p", "h", "i", "g", "lr"], ["p", "h"],
     [F((6, 3), np.float32), F((6, 3), np.float32), F(2, np.float32), F((2, 3), np.float32), LR],
     (), {}, "indices must be int32 or int64"),
    ("RowWiseSparseAdagrad", ["p", "h", "i", "g", "lr"], ["p", "h"],
     [F((6, 3), np.float32), F(5, np.float32), I64(4, 1), F((2, 3), np.float32), LR],
     (), {}, "must hold one value per row of param"),
    ("SparseAdagrad", ["p", "h", "i", "g", "lr"], ["p", "h"],
     [F((6, 3), np.float32), F((6, 3), np.float32), I64(4, 1), F((2, 3), np.float32),
      np.array([1, 2], np.float32)], ("lr",), {}, "lr must be a one-element float tensor"),
    ("SparseAdam", ["p", "m1", "m2", "i", "g", "lr", "it"], ["p", "m1", "m2"],
     [F((6, 3), np.float32), F((6, 3), np.float32), F((6, 3), np.float32), I64(4, 1),
      F((2, 3), np.float32), LR, I32(3)], ("it",), {}, "iter must be a one-element int64 tensor"),
    ("RowWiseSparseAdam", ["p", "m1", "m2", "i", "g", "lr", "it"], ["p", "m1", "m2"],
     [F((6, 3), np.float32), F((6, 3), np.float32), F((6, 3), np.float32), I64(4, 1),
      F((2, 3), np.float32), LR, I64(3)], ("it",), {}, "m2 .* must hold one value per row"),
    ("SparseMomentumSGDUpdate", ["g", "m", "lr", "p", "i"], ["g", "m", "p"],
     [F((2, 3), np.float32), F((6, 3), np.float32), LR, F((5, 3), np.float32), I64(4, 1)],
     (), {}, "moment .* and param .* must have the same shape"),
    ("ScatterWeightedSum", ["X", "w0", "i", "s", "w1"], ["X"],
     [F((6, 3), np.float32), LR, I64(4, 1), F((2, 3), np.float32), I32(2)], (), {},
     "weight 4 must be a one-element float tensor"),
    ("ScatterWeightedSum", ["X", "w0", "i", "s", "w1"], ["X"],
     [F((6, 3), np.float32), LR, I64(4, 1), F((3, 3), np.float32), LR], (), {},
     "slices input 3 .* must hold 2 rows of 3 values"),
    ("WeightedSumGradient", ["dY", "X0", "w0"], ["dX0", "dw0"],
     [F((2, 3), np.float32), F((2, 3), np.float32), LR], (), {}, "expected 1 outputs, got 2"),
    ("WeightedSumGradient", ["dY", "X0", "w0"], ["dX0"],
     [F((2, 3), np.float32), F((2, 3), np.float32), F(2, np.float32)], (), {},
     "weight 2 must be a 1-element float tensor"),
]


@pytest.mark.parametrize("case", ERRORS, ids=lambda c: "{}:{}".format(c[0], c[6][:28]))
def test_input_errors(case):
    op_type, inputs, outputs, values, host, args, message = case
    op = core.CreateOperator(op_type, inputs, outputs, **args)
    with pytest.raises(RuntimeError, match=message):
        run_on_gpu(op, values, host)
