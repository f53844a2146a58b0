"""Where: reference and bad input."""
import hypothesis.strategies as st
import numpy as np
from hypothesis import given, settings

from caffe2.python import core
import caffe2.python.hypothesis_test_util as hu

CPU = core.DeviceOption(0)


def rand(*shape, seed=0):
    return np.random.RandomState(seed).randn(*shape).astype(np.float32)


class TestWhere(hu.HypothesisTestCase):
    @given(seed=st.integers(0, 100), in_place=st.sampled_from([None, "X", "Y"]))
    @settings(deadline=None, max_examples=6)
    def test_reference(self, seed, in_place):
        rng = np.random.RandomState(seed)
        C = rng.rand(3, 4) > 0.5
        X, Y = rand(3, 4, seed=seed), rand(3, 4, seed=seed + 1)
        op = core.CreateOperator("Where", ["C", "X", "Y"], [in_place or "Z"])
        self.assertReferenceChecks(CPU, op, [C, X, Y], lambda C, X, Y: [np.where(C, X, Y)])
        rows = rng.rand(3) > 0.5
        op = core.CreateOperator("Where", ["C", "X", "Y"], ["Z"], broadcast_on_rows=1)
        self.assertReferenceChecks(CPU, op, [rows, X, Y], lambda C, X, Y: [np.where(C[:, None], X, Y)])

    def test_bad_input(self):
        op = core.CreateOperator("Where", ["C", "X", "Y"], ["Z"])
        self.assertRunOpRaises(CPU, op, [np.ones(3, bool), rand(3, 4), rand(3, 4)], exception=RuntimeError,
                               regexp=r"^\[Where\] C \(3,\) must have the dims of X \(3, 4\)")
        self.assertRunOpRaises(CPU, op, [np.ones(3, np.int32), rand(3), rand(3)], exception=RuntimeError,
                               regexp=r"C must be a bool tensor")
        with self.assertRaisesRegex(Exception, "should not have a gradient"):
            core.GradientRegistry.GetGradientForOp(op, ["Z_grad"])
