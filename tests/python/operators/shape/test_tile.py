"""Tile (arguments or inputs): reference, gradient and a bad axis."""
import hypothesis.strategies as st
import numpy as np
from hypothesis import given, settings

from caffe2.python import core
import caffe2.python.hypothesis_test_util as hu

CPU = core.DeviceOption(0)


def rand(*shape, seed=0):
    return np.random.RandomState(seed).randn(*shape).astype(np.float32)


class TestTile(hu.HypothesisTestCase):
    @given(tiles=st.integers(1, 3), axis=st.integers(-3, 2), as_inputs=st.booleans())
    @settings(deadline=None, max_examples=10)
    def test_reference_and_gradient(self, tiles, axis, as_inputs):
        X = rand(2, 3, 2)
        if as_inputs:
            op = core.CreateOperator("Tile", ["X", "t", "a"], ["Y"])
            inputs = [X, np.array([tiles], np.int32), np.array([axis], np.int32)]
        else:
            op = core.CreateOperator("Tile", ["X"], ["Y"], tiles=tiles, axis=axis)
            inputs = [X]
        reps = [1, 1, 1]
        reps[axis] = tiles
        self.assertReferenceChecks(CPU, op, inputs, lambda X, *u: [np.tile(X, reps)])
        self.assertGradientChecks(CPU, op, inputs, 0, [0])

    def test_bad_axis(self):
        op = core.CreateOperator("Tile", ["X"], ["Y"], tiles=2, axis=3)
        self.assertRunOpRaises(CPU, op, [rand(2, 3)], exception=RuntimeError,
                               regexp=r"^\[Tile\] axis 3 out of range for a 2-d input")
