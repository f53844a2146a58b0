"""ChannelStats: per-channel sums and sums of squares (NCHW, NHWC, ranks 3-5)."""
import hypothesis.strategies as st
import numpy as np
from hypothesis import given, settings

from caffe2.python import core
import caffe2.python.hypothesis_test_util as hu

CPU = core.DeviceOption(0)


class TestChannelStats(hu.HypothesisTestCase):
    @given(X=hu.tensor(min_dim=3, max_dim=5, max_value=4), order=st.sampled_from(["NCHW", "NHWC"]))
    @settings(deadline=None, max_examples=10)
    def test_reference(self, X, order):
        axes = tuple(i for i in range(X.ndim) if i != (1 if order == "NCHW" else X.ndim - 1))
        op = core.CreateOperator("ChannelStats", ["X"], ["sum", "sumsq"], order=order)
        self.assertReferenceChecks(
            CPU, op, [X], lambda X: [X.sum(axis=axes), (X * X).sum(axis=axes)], threshold=1e-3
        )

    def test_errors(self):
        op = core.CreateOperator("ChannelStats", ["X"], ["sum", "sumsq"])
        self.assertRunOpRaises(
            CPU,
            op,
            [np.zeros((2, 3), np.float32)],
            exception=RuntimeError,
            regexp=r"^\[ChannelStats\] X must have rank 3 to 5",
        )
        with self.assertRaises(Exception):
            core.GradientRegistry.GetGradientForOp(op, ["sum_grad", "sumsq_grad"])
