"""Device checks of the CUDA LayerNorm, InstanceNorm and their gradients (operators/norm/layer_norm_op.cu,
instance_norm_op.cu) against the CPU kernels: every output, axis values (negative too) and ranks,
large rows, rows with a large offset (the statistics are accumulated in double), epsilon, NCHW/NHWC
at ranks 3 to 5, 1 to 3 outputs, in-place Y, the gradient from saved or recomputed statistics, and
the input errors (the same checks and messages as the CPU ops)."""
import numpy as np
import pytest

from caffe2.python import core, workspace

from cuda_test_util import check_cpu_gpu, check_gradient_cpu_gpu, gpu, needs_gpu

COVERED_OPS = ["LayerNorm", "LayerNormGradient", "InstanceNorm", "InstanceNormGradient"]

pytestmark = needs_gpu


def f32(rng, *shape, offset=0.0, spread=1.0):
    return (rng.randn(*shape) * spread + offset).astype(np.float32)


# ---------------------------------------------------------------------------------------------
# LayerNorm

LAYER_NORM_CASES = [
    ((3, 8), {}),
    ((3, 8), dict(axis=0)),
    ((3, 8), dict(axis=-1)),
    ((2, 3, 4), {}),
    ((2, 3, 4), dict(axis=2)),
    ((2, 3, 4), dict(axis=-2)),
    ((2, 3, 4, 5), dict(axis=3)),
    ((7,), dict(axis=0)),
    ((5, 1), {}),  # one value per row: Y = 0, stdev = sqrt(epsilon)
    ((64, 4096), {}),  # rows longer than a block
    ((3, 1000), {}),  # not a multiple of the block size
    ((300, 33), dict(epsilon=0.5)),
    ((4, 16), dict(epsilon=0.0)),
]


def case_id(case):
    shape, args = case
    return "x".join(map(str, shape)) + "".join(",{}={}".format(k, v) for k, v in sorted(args.items()))


@pytest.mark.parametrize("case", LAYER_NORM_CASES, ids=case_id)
def test_layer_norm_matches_cpu(case):
    shape, args = case
    x = f32(np.random.RandomState(0), *shape, offset=0.5, spread=2.0)
    op = core.CreateOperator("LayerNorm", ["X"], ["Y", "mean", "stdev"], **args)
    check_cpu_gpu(op, [x], rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("case", LAYER_NORM_CASES, ids=case_id)
def test_layer_norm_gradient_matches_cpu(case):
    shape, args = case
    x = f32(np.random.RandomState(1), *shape, offset=-0.3, spread=1.5)
    op = core.CreateOperator("LayerNorm", ["X"], ["Y", "mean", "stdev"], **args)
    check_gradient_cpu_gpu(op, [x], rtol=1e-3, atol=1e-3)


def test_layer_norm_gradient_of_constant_rows():
    """Rows of equal values (variance 0) with epsilon > 0: finite, equal on both devices."""
    x = np.repeat(np.arange(5, dtype=np.float32)[:, None], 6, axis=1)
    op = core.CreateOperator("LayerNorm", ["X"], ["Y", "mean", "stdev"], epsilon=1e-2)
    check_gradient_cpu_gpu(op, [x], rtol=1e-3, atol=1e-3)


def test_layer_norm_large_offset_matches_numpy():
    """Rows far from 0 (mean 1000, std 0.5): a float accumulation of sum(x^2) - mean^2 would lose
    the variance; the double accumulation matches numpy in float64."""
    x = f32(np.random.RandomState(2), 64, 4096, offset=1000.0, spread=0.5)
    op = core.CreateOperator("LayerNorm", ["X"], ["Y", "mean", "stdev"], epsilon=1e-5)
    y, mean, stdev = check_cpu_gpu(op, [x], rtol=1e-4, atol=1e-4)
    x64 = x.astype(np.float64)
    np.testing.assert_allclose(mean[:, 0], x64.mean(axis=1), rtol=1e-6)
    np.testing.assert_allclose(stdev[:, 0], np.sqrt(x64.var(axis=1) + 1e-5), rtol=1e-4)
    ref = (x64 - x64.mean(axis=1, keepdims=True)) / np.sqrt(x64.var(axis=1, keepdims=True) + 1e-5)
    np.testing.assert_allclose(y, ref, rtol=1e-3, atol=2e-3)  # x - mean in float: ~1e-4 / 0.5


def test_layer_norm_gradient_op_matches_cpu():
    """LayerNormGradient on its own, with the saved statistics of a forward pass and a random dY."""
    rng = np.random.RandomState(3)
    x = f32(rng, 6, 4, 50, offset=2.0)
    fwd = core.CreateOperator("LayerNorm", ["X"], ["Y", "mean", "stdev"], axis=2)
    workspace.ResetWorkspace()
    workspace.FeedBlob("X", x)
    workspace.RunOperatorOnce(fwd)
    y, mean, stdev = (workspace.FetchBlob(n) for n in ("Y", "mean", "stdev"))
    dy = f32(rng, *x.shape)
    op = core.CreateOperator("LayerNormGradient", ["dY", "Y", "mean", "stdev", "X"], ["dX"], axis=2)
    check_cpu_gpu(op, [dy, y, mean, stdev, x], rtol=1e-4, atol=1e-4)


def test_layer_norm_empty_batch():
    """No rows (X of shape (0, 5)): empty Y, mean and stdev of shape (0, 1); the gradient too."""
    x = np.zeros((0, 5), np.float32)
    check_cpu_gpu(core.CreateOperator("LayerNorm", ["X"], ["Y", "mean", "stdev"]), [x])
    m = np.zeros((0, 1), np.float32)
    op = core.CreateOperator("LayerNormGradient", ["dY", "Y", "mean", "stdev", "X"], ["dX"])
    check_cpu_gpu(op, [x, x, m, m, x])


# ---------------------------------------------------------------------------------------------
# InstanceNorm

def x_shape(n, c, spatial, order):
    return (n, c) + tuple(spatial) if order == "NCHW" else (n,) + tuple(spatial) + (c,)


def instance_inputs(rng, n, c, spatial, order, offset=0.5):
    x = f32(rng, *x_shape(n, c, spatial, order), offset=offset, spread=2.0)
    scale = rng.uniform(0.5, 1.5, c).astype(np.float32)
    bias = f32(rng, c)
    return [x, scale, bias]


INSTANCE_LAYOUTS = [
    (2, 3, (4, 5)),
    (3, 4, (7,)),
    (2, 3, (3, 4, 5)),
    (1, 1, (1, 1)),  # one value per plane
    (2, 5, (64, 64)),  # planes longer than a block
    (4, 64, (9, 11)),  # many planes
]


def layout_id(layout):
    n, c, spatial = layout
    return "N{}C{}S{}".format(n, c, "x".join(map(str, spatial)))


@pytest.mark.parametrize("outputs", [1, 2, 3])
@pytest.mark.parametrize("order", ["NCHW", "NHWC"])
@pytest.mark.parametrize("layout", INSTANCE_LAYOUTS, ids=layout_id)
def test_instance_norm_matches_cpu(layout, order, outputs):
    inputs = instance_inputs(np.random.RandomState(4), *layout, order)
    op = core.CreateOperator("InstanceNorm", ["X", "scale", "bias"], ["Y", "mean", "inv_std"][:outputs],
                             order=order, epsilon=1e-4)
    check_cpu_gpu(op, inputs, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("order", ["NCHW", "NHWC"])
def test_instance_norm_in_place(order):
    inputs = instance_inputs(np.random.RandomState(5), 2, 3, (4, 5), order)
    op = core.CreateOperator("InstanceNorm", ["X", "scale", "bias"], ["X", "mean", "inv_std"], order=order)
    check_cpu_gpu(op, inputs, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("epsilon", [0.0, 1e-5, 1.0])
def test_instance_norm_epsilon(epsilon):
    inputs = instance_inputs(np.random.RandomState(6), 2, 3, (5, 5), "NCHW")
    op = core.CreateOperator("InstanceNorm", ["X", "scale", "bias"], ["Y", "mean", "inv_std"], epsilon=epsilon)
    check_cpu_gpu(op, inputs, rtol=1e-4, atol=1e-4)


def test_instance_norm_large_offset_matches_numpy():
    """Planes far from 0 (mean 1000, std 0.5) in NHWC: statistics match numpy in float64."""
    x, scale, bias = instance_inputs(np.random.RandomState(7), 2, 8, (32, 32), "NHWC")
    x = (x * 0.25 + 1000.0).astype(np.float32)
    op = core.CreateOperator("InstanceNorm", ["X", "scale", "bias"], ["Y", "mean", "inv_std"], order="NHWC")
    y, mean, inv_std = check_cpu_gpu(op, [x, scale, bias], rtol=1e-4, atol=1e-4)
    x64 = x.astype(np.float64)
    np.testing.assert_allclose(mean, x64.mean(axis=(1, 2)), rtol=1e-6)
    np.testing.assert_allclose(inv_std, 1 / np.sqrt(x64.var(axis=(1, 2)) + 1e-5), rtol=1e-4)


@pytest.mark.parametrize("outputs", [1, 3])
@pytest.mark.parametrize("order", ["NCHW", "NHWC"])
@pytest.mark.parametrize("layout", INSTANCE_LAYOUTS, ids=layout_id)
def test_instance_norm_gradient_matches_cpu(layout, order, outputs):
    """1 output: InstanceNormGradient recomputes the statistics; 3: it reads the saved ones."""
    inputs = instance_inputs(np.random.RandomState(8), *layout, order)
    op = core.CreateOperator("InstanceNorm", ["X", "scale", "bias"], ["Y", "mean", "inv_std"][:outputs],
                             order=order, epsilon=1e-3)
    check_gradient_cpu_gpu(op, inputs, rtol=1e-3, atol=1e-3)


@pytest.mark.parametrize("saved", [False, True])
@pytest.mark.parametrize("order", ["NCHW", "NHWC"])
def test_instance_norm_gradient_op_matches_cpu(order, saved):
    """InstanceNormGradient on its own: dX, dscale and dbias, with 4 or 6 inputs."""
    rng = np.random.RandomState(9)
    x, scale, bias = instance_inputs(rng, 3, 4, (6, 7), order)
    dy = f32(rng, *x.shape)
    inputs = [x, scale, bias, dy]
    names = ["X", "scale", "bias", "dY"]
    if saved:
        fwd = core.CreateOperator("InstanceNorm", ["X", "scale", "bias"], ["Y", "mean", "inv_std"], order=order)
        workspace.ResetWorkspace()
        for name, value in zip(names, inputs):
            workspace.FeedBlob(name, value)
        workspace.RunOperatorOnce(fwd)
        inputs += [workspace.FetchBlob("mean"), workspace.FetchBlob("inv_std")]
        names += ["mean", "inv_std"]
    op = core.CreateOperator("InstanceNormGradient", names, ["dX", "dscale", "dbias"], order=order)
    check_cpu_gpu(op, inputs, rtol=1e-4, atol=1e-4)


# ---------------------------------------------------------------------------------------------
# Input errors: the CUDA ops refuse what the CPU ops refuse, with the same messages.

def run_on_gpu(op, inputs):
    op = core.CreateOperator(op.type, list(op.input), list(op.output), device_option=gpu(),
                             arg=list(op.arg))
    workspace.ResetWorkspace()
    for name, value in zip(op.input, inputs):
        workspace.FeedBlob(name, value, gpu())
    workspace.RunOperatorOnce(op)


ERRORS = [
    ("LayerNorm", ["X"], ["Y", "m", "s"], [np.zeros((2, 3), np.float32)], dict(axis=2), "axis 2 out of range"),
    ("LayerNorm", ["X"], ["Y", "m", "s"], [np.zeros((2, 3), np.float32)], dict(axis=-3), "axis -3 out of range"),
    ("LayerNorm", ["X"], ["Y", "m", "s"], [np.zeros((2, 0), np.float32)], {}, "cannot normalize empty rows"),
    ("LayerNorm", ["X"], ["Y", "m", "s"], [np.zeros((2, 3), np.int32)], {}, "float input expected"),
    ("LayerNorm", ["X"], ["Y", "m", "s"], [np.zeros((2, 3), np.float32)], dict(epsilon=-1.0),
     "epsilon must be >= 0"),
    ("LayerNormGradient", ["dY", "Y", "m", "s", "X"], ["dX"],
     [np.zeros((2, 4), np.float32), np.zeros((2, 3), np.float32), np.zeros((2, 1), np.float32),
      np.zeros((2, 1), np.float32), np.zeros((2, 3), np.float32)], {}, "must be shaped like X"),
    ("LayerNormGradient", ["dY", "Y", "m", "s", "X"], ["dX"],
     [np.zeros((2, 3), np.float32), np.zeros((2, 3), np.float32), np.zeros((3, 1), np.float32),
      np.zeros((2, 1), np.float32), np.zeros((2, 3), np.float32)], {}, r"one value per row \(2\)"),
    ("InstanceNorm", ["X", "s", "b"], ["Y"],
     [np.zeros((2, 3, 4), np.float32), np.ones(2, np.float32), np.zeros(3, np.float32)], {},
     "scale .* must hold 3 floats"),
    ("InstanceNorm", ["X", "s", "b"], ["Y"],
     [np.zeros((2, 3, 4), np.float32), np.ones(3, np.float32), np.zeros(4, np.float32)], dict(order="NHWC"),
     "scale .* must hold 4 floats"),
    ("InstanceNorm", ["X", "s", "b"], ["Y"],
     [np.zeros((2, 3, 4), np.float32), np.ones(3, np.float32), np.zeros(4, np.float32)], {},
     "bias .* must hold 3 floats"),
    ("InstanceNorm", ["X", "s", "b"], ["Y"],
     [np.zeros((2, 3, 4), np.float32), np.ones(3, np.float32), np.zeros(3, np.float32)], dict(order="NCWH"),
     "NCWH"),
    ("InstanceNorm", ["X", "s", "b"], ["Y"],
     [np.zeros((2, 3, 4), np.float32), np.ones(3, np.float32), np.zeros(3, np.float32)], dict(epsilon=-1e-3),
     "epsilon must be >= 0"),
    ("InstanceNormGradient", ["X", "s", "b", "dY"], ["dX", "ds", "db"],
     [np.zeros((2, 3, 4), np.float32), np.ones(3, np.float32), np.zeros(3, np.float32),
      np.zeros((2, 3, 5), np.float32)], {}, "must be shaped like X"),
    ("InstanceNormGradient", ["X", "s", "b", "dY", "m", "is"], ["dX", "ds", "db"],
     [np.zeros((2, 3, 4), np.float32), np.ones(3, np.float32), np.zeros(3, np.float32),
      np.zeros((2, 3, 4), np.float32), np.zeros((2, 3), np.float32), np.zeros((3, 1), np.float32)], {},
     "inv_std .* must hold N x C = 6 floats"),
]


@pytest.mark.parametrize("case", ERRORS, ids=lambda c: "{}:{}".format(c[0], c[5][:24]))
def test_input_errors(case):
    op_type, inputs, outputs, values, args, message = case
    op = core.CreateOperator(op_type, inputs, outputs, **args)
    with pytest.raises(RuntimeError, match=message):
        run_on_gpu(op, values)
