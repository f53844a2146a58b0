"""CrossEntropy with soft labels: reference, gradient and shape errors; device checks against the
CPU kernel."""
import hypothesis.strategies as st
import numpy as np
import pytest
from hypothesis import given, settings

from caffe2.python import core
import caffe2.python.hypothesis_test_util as hu

from device_check import needs_gpu
from loss_inputs import MANY_ROWS, check_with_gradient, probs, rng

COVERED_CUDA_OPS = ["CrossEntropy", "CrossEntropyGradient"]

CPU = core.DeviceOption(0)


class TestCrossEntropy(hu.HypothesisTestCase):
    @given(n=st.integers(1, 5), d=st.integers(1, 5), seed=st.integers(0, 1000))
    @settings(deadline=None, max_examples=10)
    def test_reference_and_gradient(self, n, d, seed):
        rng = np.random.RandomState(seed)
        X = (rng.rand(n, d) * 0.8 + 0.2).astype(np.float32)
        T = rng.rand(n, d).astype(np.float32)
        T /= T.sum(axis=1, keepdims=True)
        op = core.CreateOperator("CrossEntropy", ["X", "T"], ["Y"])
        self.assertReferenceChecks(CPU, op, [X, T], lambda X, T: [-(T * np.log(X)).sum(axis=1)])
        self.assertGradientChecks(CPU, op, [X, T], 0, [0], stepsize=1e-3, threshold=0.01)

    def test_errors(self):
        op = core.CreateOperator("CrossEntropy", ["X", "T"], ["Y"])
        self.assertRunOpRaises(
            CPU,
            op,
            [np.ones((2, 3), np.float32), np.ones((2, 4), np.float32)],
            exception=RuntimeError,
            regexp=r"^\[CrossEntropy\] label must be float and shaped like X \(2, 3\)",
        )


@needs_gpu
@pytest.mark.parametrize("shape", [(4, 3), (64, 1000), (MANY_ROWS, 3), (7,), (2, 4097)])
def test_cross_entropy(shape):
    r = rng(13)
    n, d = (shape[0], shape[1]) if len(shape) == 2 else (1, shape[0])
    x, t = probs(r, n, d).reshape(shape), probs(r, n, d).reshape(shape)
    check_with_gradient(core.CreateOperator("CrossEntropy", ["X", "L"], ["Y"]), [x, t])
