"""SquaredL2Distance: numpy reference, finite-difference gradients and a shape mismatch; device
checks against the CPU kernel."""
import hypothesis.strategies as st
import numpy as np
import pytest
from hypothesis import given, settings

from caffe2.python import core
import caffe2.python.hypothesis_test_util as hu

from device_check import check_cpu_gpu, needs_gpu
from loss_inputs import MANY_ROWS, check_with_gradient, logits, rng

COVERED_CUDA_OPS = ["SquaredL2Distance", "SquaredL2DistanceGradient"]

CPU = core.DeviceOption(0)


class TestLosses(hu.HypothesisTestCase):
    @given(n=st.integers(1, 5), d=st.integers(1, 5), seed=st.integers(0, 1000))
    @settings(deadline=None, max_examples=10)
    def test_squared_l2_distance(self, n, d, seed):
        rng = np.random.RandomState(seed)
        X = rng.randn(n, d).astype(np.float32)
        Y = rng.randn(n, d).astype(np.float32)
        op = core.CreateOperator("SquaredL2Distance", ["X", "Y"], ["Z"])
        self.assertReferenceChecks(CPU, op, [X, Y], lambda X, Y: [0.5 * ((X - Y) ** 2).sum(axis=1)])
        self.assertGradientChecks(CPU, op, [X, Y], 0, [0])
        self.assertGradientChecks(CPU, op, [X, Y], 1, [0])

    def test_shape_mismatch(self):
        op = core.CreateOperator("SquaredL2Distance", ["X", "Y"], ["Z"])
        self.assertRunOpRaises(
            CPU,
            op,
            [np.zeros((2, 3), np.float32), np.zeros((3, 2), np.float32)],
            exception=RuntimeError,
            regexp="must have the same shape",
        )


@needs_gpu
@pytest.mark.parametrize("shape", [(4, 6), (64, 1000), (MANY_ROWS, 3), (7,), (2, 3, 4), (2, 4097)])
def test_squared_l2_distance(shape):
    r = rng(18)
    op = core.CreateOperator("SquaredL2Distance", ["X", "Y"], ["Z"])
    check_with_gradient(op, [logits(r, *shape), logits(r, *shape)])


@needs_gpu
def test_squared_l2_distance_of_empty_rows():
    op = core.CreateOperator("SquaredL2Distance", ["X", "Y"], ["Z"])
    (z,) = check_cpu_gpu(op, [np.zeros((3, 0), np.float32), np.zeros((3, 0), np.float32)])
    assert z.shape == (3,) and not z.any()
