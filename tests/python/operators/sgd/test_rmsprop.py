"""RmsProp: numpy reference over several steps in place. Its device check is in test_sgd_ops.py."""
import hypothesis.strategies as st
import numpy as np
from hypothesis import given, settings

from caffe2.python import core, workspace
import caffe2.python.hypothesis_test_util as hu


def f32(*shape, seed=0, pos=False):
    v = np.random.RandomState(seed).randn(*shape).astype(np.float32)
    return np.abs(v) + 0.1 if pos else v


class TestRmsProp(hu.HypothesisTestCase):
    @given(seed=st.integers(0, 100), momentum=st.floats(0.0, 0.9))
    @settings(deadline=None, max_examples=6)
    def test_several_steps_in_place(self, seed, momentum):
        ms, mom = f32(7, seed=seed, pos=True), f32(7, seed=seed + 1)
        lr = np.array([0.01], np.float32)
        workspace.FeedBlob("ms", ms)
        workspace.FeedBlob("mom", mom)
        workspace.FeedBlob("lr", lr)
        op = core.CreateOperator(
            "RmsProp",
            ["g", "ms", "mom", "lr"],
            ["g", "ms", "mom"],
            decay=0.8,
            momentum=momentum,
            epsilon=1e-4,
        )
        rs, rm = ms.astype(np.float64), mom.astype(np.float64)
        for step in range(3):
            g = f32(7, seed=seed + 40 + step)
            workspace.FeedBlob("g", g)
            workspace.RunOperatorOnce(op)
            rs = rs + 0.2 * (g * g - rs)
            rm = momentum * rm + lr[0] * g / np.sqrt(1e-4 + rs)
            np.testing.assert_allclose(workspace.FetchBlob("g"), rm, rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(workspace.FetchBlob("ms"), rs, rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(workspace.FetchBlob("mom"), rm, rtol=1e-5, atol=1e-6)
