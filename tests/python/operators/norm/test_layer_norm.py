"""LayerNorm and LayerNormGradient: reference over axis, moments shapes, gradient, errors; device
checks against the CPU kernel (axes, large rows, rows with a large offset, epsilon, the gradient
op alone, an empty batch)."""
import hypothesis.strategies as st
import numpy as np
import pytest
from hypothesis import given, settings

from caffe2.python import core, workspace
import caffe2.python.hypothesis_test_util as hu

from device_check import check_cpu_gpu, check_gradient_cpu_gpu, needs_gpu

COVERED_CUDA_OPS = ["LayerNorm", "LayerNormGradient"]

CPU = core.DeviceOption(0)


def layer_norm_ref(X, axis, eps):
    lead = X.shape[:axis]
    x = X.reshape(int(np.prod(lead)), -1).astype(np.float64)
    mean = x.mean(axis=1, keepdims=True)
    stdev = np.sqrt(x.var(axis=1, keepdims=True) + eps)
    Y = ((x - mean) / stdev).reshape(X.shape)
    mshape = tuple(lead) + (1,)
    return [
        Y.astype(np.float32),
        mean.reshape(mshape).astype(np.float32),
        stdev.reshape(mshape).astype(np.float32),
    ]


class TestLayerNorm(hu.HypothesisTestCase):
    @given(
        shape=st.lists(st.integers(3, 4), min_size=2, max_size=4),
        axis=st.integers(1, 3),
        eps=st.sampled_from([1e-5, 1e-2]),
        seed=st.integers(0, 1000),
    )
    @settings(deadline=None, max_examples=10)
    def test_reference_and_gradient(self, shape, axis, eps, seed):
        # Well-spread rows: finite differences of a near-constant row are not meaningful.
        X = np.random.RandomState(seed).randn(*shape).astype(np.float32)
        axis = min(axis, X.ndim - 1)
        op = core.CreateOperator("LayerNorm", ["X"], ["Y", "mean", "stdev"], axis=axis, epsilon=eps)
        self.assertReferenceChecks(
            CPU, op, [X], lambda X: layer_norm_ref(X, axis, eps), threshold=1e-3
        )
        self.assertGradientChecks(CPU, op, [X], 0, [0], stepsize=0.005, threshold=0.02)

    def test_gradient_def(self):
        op = core.CreateOperator("LayerNorm", ["X"], ["Y", "m", "s"])
        g, _ = core.GradientRegistry.GetGradientForOp(op, ["Y_grad", None, None])
        self.assertEqual(g[0].type, "LayerNormGradient")
        self.assertEqual(list(g[0].input), ["Y_grad", "Y", "m", "s", "X"])
        self.assertEqual(list(g[0].output), ["X_grad"])

    def test_errors(self):
        op = core.CreateOperator("LayerNorm", ["X"], ["Y", "m", "s"], axis=2)
        self.assertRunOpRaises(
            CPU,
            op,
            [np.zeros((2, 3), np.float32)],
            exception=RuntimeError,
            regexp=r"^\[LayerNorm\] axis 2 out of range for X \(2, 3\)",
        )


def f32(rng, *shape, offset=0.0, spread=1.0):
    return (rng.randn(*shape) * spread + offset).astype(np.float32)


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
    return "x".join(map(str, shape)) + "".join(
        ",{}={}".format(k, v) for k, v in sorted(args.items())
    )


@needs_gpu
@pytest.mark.parametrize("case", LAYER_NORM_CASES, ids=case_id)
def test_layer_norm_matches_cpu(case):
    shape, args = case
    x = f32(np.random.RandomState(0), *shape, offset=0.5, spread=2.0)
    op = core.CreateOperator("LayerNorm", ["X"], ["Y", "mean", "stdev"], **args)
    check_cpu_gpu(op, [x], rtol=1e-4, atol=1e-4)


@needs_gpu
@pytest.mark.parametrize("case", LAYER_NORM_CASES, ids=case_id)
def test_layer_norm_gradient_matches_cpu(case):
    shape, args = case
    x = f32(np.random.RandomState(1), *shape, offset=-0.3, spread=1.5)
    op = core.CreateOperator("LayerNorm", ["X"], ["Y", "mean", "stdev"], **args)
    check_gradient_cpu_gpu(op, [x], rtol=1e-3, atol=1e-3)


@needs_gpu
def test_layer_norm_gradient_of_constant_rows():
    """Rows of equal values (variance 0) with epsilon > 0: finite, equal on both devices."""
    x = np.repeat(np.arange(5, dtype=np.float32)[:, None], 6, axis=1)
    op = core.CreateOperator("LayerNorm", ["X"], ["Y", "mean", "stdev"], epsilon=1e-2)
    check_gradient_cpu_gpu(op, [x], rtol=1e-3, atol=1e-3)


@needs_gpu
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


@needs_gpu
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


@needs_gpu
def test_layer_norm_empty_batch():
    """No rows (X of shape (0, 5)): empty Y, mean and stdev of shape (0, 1); the gradient too."""
    x = np.zeros((0, 5), np.float32)
    check_cpu_gpu(core.CreateOperator("LayerNorm", ["X"], ["Y", "mean", "stdev"]), [x])
    m = np.zeros((0, 1), np.float32)
    op = core.CreateOperator("LayerNormGradient", ["dY", "Y", "mean", "stdev", "X"], ["dX"])
    check_cpu_gpu(op, [x, x, m, m, x])
