"""PRelu and PReluGradient: shared and per-channel slopes, NCHW/NHWC, gradients, in place, errors;
device checks against the CPU kernel."""
import hypothesis.strategies as st
import numpy as np
import pytest
from hypothesis import given, settings

from caffe2.python import core
import caffe2.python.hypothesis_test_util as hu

from device_check import check_cpu_gpu, check_gradient_cpu_gpu, needs_gpu

COVERED_CUDA_OPS = ["PRelu", "PReluGradient"]

CPU = core.DeviceOption(0)


def prelu_ref(X, slope, order):
    if slope.size == 1:
        w = slope.reshape(())
    else:
        shape = [1] * X.ndim
        shape[1 if order == "NCHW" else -1] = -1
        w = slope.reshape(shape)
    return [np.where(X > 0, X, w * X).astype(np.float32)]


class TestPRelu(hu.HypothesisTestCase):
    @given(
        n=st.integers(1, 3),
        c=st.integers(1, 4),
        hw=st.sampled_from([(), (3,), (2, 2)]),
        shared=st.booleans(),
        order=st.sampled_from(["NCHW", "NHWC"]),
        seed=st.integers(0, 1000),
        in_place=st.booleans(),
    )
    @settings(deadline=None, max_examples=10)
    def test_reference_and_gradient(self, n, c, hw, shared, order, seed, in_place):
        rng = np.random.RandomState(seed)
        shape = (n, c) + hw if order == "NCHW" else (n,) + hw + (c,)
        X = rng.randn(*shape).astype(np.float32)
        X[np.abs(X) < 0.1] = 0.5  # keep finite differences away from the kink
        slope = rng.randn(1 if shared else c).astype(np.float32)
        op = core.CreateOperator("PRelu", ["X", "slope"], ["X" if in_place else "Y"], order=order)
        self.assertReferenceChecks(CPU, op, [X, slope], lambda X, s: prelu_ref(X, s, order))
        if not in_place:
            self.assertGradientChecks(CPU, op, [X, slope], 0, [0])
            self.assertGradientChecks(CPU, op, [X, slope], 1, [0])

    def test_gradient_def(self):
        op = core.CreateOperator("PRelu", ["X", "w"], ["Y"])
        g, _ = core.GradientRegistry.GetGradientForOp(op, ["Y_grad"])
        self.assertEqual(g[0].type, "PReluGradient")
        self.assertEqual(list(g[0].input), ["Y", "Y_grad", "X", "w"])
        self.assertEqual(list(g[0].output), ["X_grad", "w_grad"])

    def test_errors(self):
        op = core.CreateOperator("PRelu", ["X", "w"], ["Y"])
        self.assertRunOpRaises(
            CPU,
            op,
            [np.zeros((2, 3, 4), np.float32), np.zeros(2, np.float32)],
            exception=RuntimeError,
            regexp=r"^\[PRelu\] slope \(2,\) must hold 1 or C = 3 values for X \(2, 3, 4\)",
        )


def _away_from_kinks(x):
    """Moves values off 0 and the Clip bounds, where a gradient is not smooth."""
    x = np.where(np.abs(x) < 0.05, 0.1, x)
    for bound in (-0.3, 0.4):
        x = np.where(np.abs(x - bound) < 0.05, bound + 0.1, x)
    return x.astype(np.float32)


@needs_gpu
@pytest.mark.parametrize(
    "x_shape,slope_shape,order",
    [
        ((2, 3, 4, 5), (3,), "NCHW"),
        ((2, 4, 5, 3), (3,), "NHWC"),
        ((6, 7), (1,), "NCHW"),
        ((3, 5), (5,), "NHWC"),
    ],
)
def test_prelu(x_shape, slope_shape, order):
    rng = np.random.RandomState(13)
    x = _away_from_kinks(rng.randn(*x_shape))
    slope = rng.rand(*slope_shape).astype(np.float32)
    op = core.CreateOperator("PRelu", ["x", "slope"], ["y"], order=order)
    check_cpu_gpu(op, [x, slope], rtol=1e-6, atol=1e-6)
    check_gradient_cpu_gpu(op, [x, slope], rtol=1e-5, atol=1e-5)
