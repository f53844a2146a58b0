"""ArgMax and ArgMin: references, ties and a bad axis."""
import hypothesis.strategies as st
import numpy as np
from hypothesis import given, settings

from caffe2.python import core
import caffe2.python.hypothesis_test_util as hu

CPU = core.DeviceOption(0)


class TestArgMaxMin(hu.HypothesisTestCase):
    @given(X=hu.tensor(min_dim=1, max_dim=3), axis=st.integers(-3, 2), keepdims=st.booleans())
    @settings(deadline=None, max_examples=10)
    def test_reference(self, X, axis, keepdims):
        axis = axis % X.ndim
        for op_type, fn in [("ArgMax", np.argmax), ("ArgMin", np.argmin)]:
            op = core.CreateOperator(op_type, ["X"], ["Y"], axis=axis, keepdims=keepdims)

            def ref(X):
                r = fn(X, axis=axis)
                return [np.expand_dims(r, axis) if keepdims else r]
            self.assertReferenceChecks(CPU, op, [X], ref)

    def test_ties_and_bad_axis(self):
        X = np.array([[1, 3, 3], [2, 2, 0]], np.int32)
        op = core.CreateOperator("ArgMax", ["X"], ["Y"], keepdims=0)
        self.assertReferenceChecks(CPU, op, [X], lambda X: [np.array([1, 0], np.int64)])
        op = core.CreateOperator("ArgMin", ["X"], ["Y"], axis=2)
        self.assertRunOpRaises(CPU, op, [X], exception=RuntimeError,
                               regexp=r"^\[ArgMin\] axis 2 out of range for a 2-d input")
