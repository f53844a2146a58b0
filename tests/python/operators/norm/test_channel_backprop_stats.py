"""ChannelBackpropStats: per-channel dscale and dbias against numpy."""
import hypothesis.strategies as st
import numpy as np
from hypothesis import given, settings

from caffe2.python import core
import caffe2.python.hypothesis_test_util as hu

CPU = core.DeviceOption(0)


class TestChannelBackpropStats(hu.HypothesisTestCase):
    @given(
        n=st.integers(1, 3),
        c=st.integers(1, 4),
        hw=st.sampled_from([(3,), (2, 2)]),
        seed=st.integers(0, 1000),
    )
    @settings(deadline=None, max_examples=10)
    def test_reference(self, n, c, hw, seed):
        rng = np.random.RandomState(seed)
        X = rng.randn(n, c, *hw).astype(np.float32)
        dY = rng.randn(n, c, *hw).astype(np.float32)
        mean = rng.randn(c).astype(np.float32)
        inv_std = (rng.rand(c) + 0.5).astype(np.float32)
        cs = (1, c) + (1,) * len(hw)
        axes = (0,) + tuple(range(2, 2 + len(hw)))

        def ref(X, mean, inv_std, dY):
            return [
                ((X - mean.reshape(cs)) * inv_std.reshape(cs) * dY).sum(axis=axes),
                dY.sum(axis=axes),
            ]

        op = core.CreateOperator(
            "ChannelBackpropStats", ["X", "mean", "inv_std", "dY"], ["ds", "db"]
        )
        self.assertReferenceChecks(CPU, op, [X, mean, inv_std, dY], ref, threshold=1e-3)

    def test_errors(self):
        op = core.CreateOperator(
            "ChannelBackpropStats", ["X", "mean", "inv_std", "dY"], ["ds", "db"]
        )
        X = np.zeros((2, 3, 4), np.float32)
        self.assertRunOpRaises(
            CPU,
            op,
            [X, np.zeros(2, np.float32), np.zeros(3, np.float32), X],
            exception=RuntimeError,
            regexp=r"^\[ChannelBackpropStats\] saved_mean \(2,\) must hold 3 floats",
        )
        self.assertRunOpRaises(
            CPU,
            op,
            [X, np.zeros(3, np.float32), np.zeros(3, np.float32), X[:1]],
            exception=RuntimeError,
            regexp=r"dY \(1, 3, 4\) must be float and shaped like X",
        )
