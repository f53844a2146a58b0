"""ElementwiseLinear: Y = X * w + b per column of X viewed as (N, D) at axis; gradient and errors;
device checks against the CPU kernel."""
import unittest

import hypothesis.strategies as st
import numpy as np
import pytest
from hypothesis import given, settings

from caffe2.python import core
import caffe2.python.hypothesis_test_util as hu

from device_check import check_cpu_gpu, check_gradient_cpu_gpu, needs_gpu

COVERED_CUDA_OPS = ["ElementwiseLinear", "ElementwiseLinearGradient"]

CPU = core.DeviceOption(0)


class TestElementwiseLinear(hu.HypothesisTestCase):
    @given(n=st.integers(1, 4), d=st.integers(1, 5), seed=st.integers(0, 1000))
    @settings(deadline=None, max_examples=10)
    def test_reference_and_gradient(self, n, d, seed):
        rng = np.random.RandomState(seed)
        X = rng.randn(n, d).astype(np.float32)
        w = rng.randn(d).astype(np.float32)
        b = rng.randn(d).astype(np.float32)
        op = core.CreateOperator("ElementwiseLinear", ["X", "w", "b"], ["Y"])
        self.assertReferenceChecks(CPU, op, [X, w, b], lambda X, w, b: [X * w + b])
        for i in range(3):
            self.assertGradientChecks(CPU, op, [X, w, b], i, [0])

    def test_axis(self):
        rng = np.random.RandomState(0)
        X = rng.randn(2, 3, 4).astype(np.float32)
        w = rng.randn(4).astype(np.float32)
        b = rng.randn(4).astype(np.float32)
        op = core.CreateOperator("ElementwiseLinear", ["X", "w", "b"], ["Y"], axis=2)
        self.assertReferenceChecks(CPU, op, [X, w, b], lambda X, w, b: [X * w + b])
        for i in range(3):
            self.assertGradientChecks(CPU, op, [X, w, b], i, [0])
        w12 = rng.randn(12).astype(np.float32)
        op = core.CreateOperator("ElementwiseLinear", ["X", "w", "b"], ["Y"])
        self.assertReferenceChecks(
            CPU, op, [X, w12, w12], lambda X, w, b: [(X.reshape(2, 12) * w + b).reshape(2, 3, 4)]
        )

    def test_gradient_op(self):
        op = core.CreateOperator("ElementwiseLinear", ["X", "w", "b"], ["Y"])
        ops, _ = core.GradientRegistry.GetGradientForOp(op, ["Y_grad"])
        self.assertEqual(
            [(o.type, list(o.input), list(o.output)) for o in ops],
            [("ElementwiseLinearGradient", ["Y_grad", "X", "w"], ["X_grad", "w_grad", "b_grad"])],
        )

    def test_errors(self):
        op = core.CreateOperator("ElementwiseLinear", ["X", "w", "b"], ["Y"])
        X = np.zeros((2, 3), np.float32)
        self.assertRunOpRaises(
            CPU,
            op,
            [X, np.zeros(4, np.float32), np.zeros(3, np.float32)],
            exception=RuntimeError,
            regexp=r"^\[ElementwiseLinear\] w \(4,\) must be 1-d with 3 elements",
        )
        self.assertRunOpRaises(
            CPU,
            op,
            [X, np.zeros(3, np.float32), np.zeros(2, np.float32)],
            exception=RuntimeError,
            regexp=r"^\[ElementwiseLinear\] b .* 3 elements",
        )
        self.assertRunOpRaises(
            CPU,
            op,
            [X.astype(np.float64), np.zeros(3), np.zeros(3)],
            exception=RuntimeError,
            regexp=r"^\[ElementwiseLinear\] float tensors expected, got X double",
        )


@needs_gpu
@pytest.mark.parametrize(
    "x_shape,axis", [((4, 5), 1), ((2, 3, 4), 1), ((2, 3, 4), 2), ((300, 70), 1)]
)
def test_elementwise_linear(x_shape, axis):
    rng = np.random.RandomState(14)
    x = rng.randn(*x_shape).astype(np.float32)
    d = int(np.prod(x_shape[axis:]))
    w, b = rng.randn(d).astype(np.float32), rng.randn(d).astype(np.float32)
    op = core.CreateOperator("ElementwiseLinear", ["x", "w", "b"], ["y"], axis=axis)
    check_cpu_gpu(op, [x, w, b], rtol=1e-6, atol=1e-6)
    check_gradient_cpu_gpu(op, [x, w, b], rtol=1e-5, atol=1e-5)


if __name__ == "__main__":
    unittest.main()
