"""Div and DivGradient: the gradient ops emitted, no gradient of a broadcasting Div, in-place B,
integer division by zero; device checks of DivGradient. The checks Div shares with Add, Sub and
Mul are in test_elementwise_ops.py."""
import unittest

import numpy as np
import pytest

from caffe2.python import core
import caffe2.python.hypothesis_test_util as hu

from device_check import check_cpu_gpu, needs_gpu

COVERED_CUDA_OPS = ["DivGradient"]

CPU = core.DeviceOption(0)


def inputs(a_shape, b_shape, seed=0, positive_b=False):
    rng = np.random.RandomState(seed)
    A = rng.randn(*a_shape).astype(np.float32)
    B = rng.randn(*b_shape).astype(np.float32)
    if positive_b:
        B = (np.abs(B) + 1.0).astype(np.float32)
    return A, B


R = np.random.RandomState(0)


class TestGradientOps(unittest.TestCase):
    def grad(self, op):
        return core.GradientRegistry.GetGradientForOp(op, ["C_grad"])

    def test_div(self):
        ops, g = self.grad(core.CreateOperator("Div", ["A", "B"], ["C"]))
        self.assertEqual(
            [(o.type, list(o.input), list(o.output)) for o in ops],
            [("DivGradient", ["B", "C", "C_grad"], ["A_grad", "B_grad"])],
        )

    def test_div_broadcast_has_no_gradient(self):
        with self.assertRaisesRegex(
            Exception, r"\[Div\] the gradient of a broadcasting Div is not supported"
        ):
            self.grad(core.CreateOperator("Div", ["A", "B"], ["C"], broadcast=1))


class TestErrors(hu.HypothesisTestCase):
    def raises(self, op, A, B, regexp):
        self.assertRunOpRaises(CPU, op, [A, B], exception=RuntimeError, regexp=regexp)

    def test_div_in_place_b_is_rejected_by_schema(self):
        A, B = inputs((2, 3), (2, 3))
        self.raises(
            core.CreateOperator("Div", ["A", "B"], ["B"]),
            A,
            B,
            r"^\[Div\] input 1 and output 0 are both .B., but this op cannot run in place",
        )

    def test_integer_division_by_zero(self):
        self.raises(
            core.CreateOperator("Div", ["A", "B"], ["C"]),
            np.ones(3, np.int32),
            np.array([1, 0, 2], np.int32),
            r"integer division by zero: B\[1\] is 0",
        )


@needs_gpu
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_div_gradient(dtype):
    b = (R.rand(6, 7) + 0.5).astype(dtype)
    c, dc = R.randn(6, 7).astype(dtype), R.randn(6, 7).astype(dtype)
    check_cpu_gpu(
        core.CreateOperator("DivGradient", ["b", "c", "dc"], ["da", "db"]),
        [b, c, dc],
        rtol=1e-6,
        atol=1e-6,
    )
