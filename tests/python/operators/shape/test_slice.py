"""Slice: reference, gradient, int ranges and bad ranges."""
import hypothesis.strategies as st
import numpy as np
from hypothesis import given, settings

from caffe2.python import core
import caffe2.python.hypothesis_test_util as hu

CPU = core.DeviceOption(0)


def rand(*shape, seed=0):
    return np.random.RandomState(seed).randn(*shape).astype(np.float32)


def py_range(start, end, dim):
    return slice(dim + 1 + start if start < 0 else start, dim + 1 + end if end < 0 else end)


class TestSlice(hu.HypothesisTestCase):
    @given(starts=st.sampled_from([[0], [1, 0], [-3, 1], [0, 0, 2]]),
           ends=st.sampled_from([[-1], [3, -1], [-2, 3], [2, -2, 4]]), as_inputs=st.booleans())
    @settings(deadline=None, max_examples=10)
    def test_reference_and_gradient(self, starts, ends, as_inputs):
        n = min(len(starts), len(ends))
        starts, ends = starts[:n], ends[:n]
        X = rand(4, 3, 5)
        if as_inputs:
            op = core.CreateOperator("Slice", ["X", "s", "e"], ["Y"])
            inputs = [X, np.array(starts, np.int32), np.array(ends, np.int32)]
        else:
            op = core.CreateOperator("Slice", ["X"], ["Y"], starts=starts, ends=ends)
            inputs = [X]

        def ref(X, *unused):
            return [X[tuple(py_range(s, e, X.shape[i]) for i, (s, e) in enumerate(zip(starts, ends)))]]
        self.assertReferenceChecks(CPU, op, inputs, ref)
        self.assertGradientChecks(CPU, op, inputs, 0, [0])

    def test_int_and_bad_ranges(self):
        X = np.arange(12, dtype=np.int64).reshape(3, 4)
        op = core.CreateOperator("Slice", ["X"], ["Y"], starts=[1, 1], ends=[3, -2])
        self.assertReferenceChecks(CPU, op, [X], lambda X: [X[1:3, 1:3]])
        op = core.CreateOperator("Slice", ["X"], ["Y"], starts=[0, 3], ends=[2, 6])
        self.assertRunOpRaises(CPU, op, [X], exception=RuntimeError,
                               regexp=r"^\[Slice\] slice \[3, 6\) of dim 1 is out of range for X \(3, 4\)")
        op = core.CreateOperator("Slice", ["X"], ["Y"], starts=[0, 1], ends=[2])
        self.assertRunOpRaises(CPU, op, [X], exception=RuntimeError, regexp="starts has 2 entries but ends has 1")
