"""Squeeze and ExpandDims: references, gradients, in place and bad dims. Their device checks are in
test_shape_ops.py."""
import hypothesis.strategies as st
import numpy as np
from hypothesis import given, settings

from caffe2.python import core
import caffe2.python.hypothesis_test_util as hu

CPU = core.DeviceOption(0)


def rand(*shape, seed=0):
    return np.random.RandomState(seed).randn(*shape).astype(np.float32)


class TestSqueezeExpandDims(hu.HypothesisTestCase):
    @given(in_place=st.booleans())
    @settings(deadline=None, max_examples=2)
    def test_squeeze_and_expand(self, in_place):
        X = rand(1, 3, 1, 2)
        out = "X" if in_place else "Y"
        op = core.CreateOperator("Squeeze", ["X"], [out], dims=[2, 0, 2])
        self.assertReferenceChecks(CPU, op, [X], lambda X: [X.reshape(3, 2)])
        if not in_place:
            self.assertGradientChecks(CPU, op, [X], 0, [0])
        Z = rand(3, 2)
        op = core.CreateOperator("ExpandDims", ["X"], [out], dims=[0, 3])
        self.assertReferenceChecks(CPU, op, [Z], lambda X: [X.reshape(1, 3, 2, 1)])
        if not in_place:
            self.assertGradientChecks(CPU, op, [Z], 0, [0])

    def test_bad_dims(self):
        op = core.CreateOperator("Squeeze", ["X"], ["Y"], dims=[1])
        self.assertRunOpRaises(
            CPU,
            op,
            [rand(1, 3)],
            exception=RuntimeError,
            regexp=r"^\[Squeeze\] dim 1 of X \(1, 3\) has size 3, only size-1 dims",
        )
        op = core.CreateOperator("ExpandDims", ["X"], ["Y"], dims=[5])
        self.assertRunOpRaises(
            CPU, op, [rand(1, 3)], exception=RuntimeError, regexp="dims entry 5 out of range"
        )
        op = core.CreateOperator("Squeeze", ["X"], ["Y"])
        self.assertRunOpRaises(CPU, op, [rand(1, 3)], exception=RuntimeError, regexp="'dims'")
