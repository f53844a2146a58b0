"""FCTransposed and FCTransposedGradient: W stored (K, N); reference, axis_w, gradients, errors."""
import hypothesis.strategies as st
import numpy as np
from hypothesis import given, settings

from caffe2.python import core
import caffe2.python.hypothesis_test_util as hu

CPU = core.DeviceOption(0)


class TestFCTransposed(hu.HypothesisTestCase):
    @given(m=st.integers(1, 5), k=st.integers(1, 6), n=st.integers(1, 4), seed=st.integers(0, 1000))
    @settings(deadline=None, max_examples=10)
    def test_reference_and_gradient(self, m, k, n, seed):
        rng = np.random.RandomState(seed)
        X = rng.randn(m, k).astype(np.float32)
        W = rng.randn(k, n).astype(np.float32)
        b = rng.randn(n).astype(np.float32)
        op = core.CreateOperator("FCTransposed", ["X", "W", "b"], ["Y"])
        self.assertReferenceChecks(CPU, op, [X, W, b], lambda X, W, b: [X @ W + b])
        for i in range(3):
            self.assertGradientChecks(CPU, op, [X, W, b], i, [0])

    def test_axes(self):
        X = np.random.randn(2, 3, 4).astype(np.float32)
        W = np.random.randn(12, 5).astype(np.float32)
        b = np.zeros(5, np.float32)
        op = core.CreateOperator("FCTransposed", ["X", "W", "b"], ["Y"])
        self.assertReferenceChecks(CPU, op, [X, W, b], lambda X, W, b: [X.reshape(2, 12) @ W + b])
        W2 = np.random.randn(4, 2, 3).astype(np.float32)
        b2 = np.zeros(6, np.float32)
        op2 = core.CreateOperator("FCTransposed", ["X", "W", "b"], ["Y"], axis=2, axis_w=1)
        self.assertReferenceChecks(CPU, op2, [X, W2, b2], lambda X, W, b: [X @ W.reshape(4, 6) + b])
        self.assertGradientChecks(CPU, op2, [X, W2, b2], 1, [0])

    def test_gradient_def(self):
        op = core.CreateOperator("FCTransposed", ["X", "W", "b"], ["Y"])
        g, _ = core.GradientRegistry.GetGradientForOp(op, ["Y_grad"])
        self.assertEqual(g[0].type, "FCTransposedGradient")
        self.assertEqual(list(g[0].input), ["X", "W", "Y_grad"])
        self.assertEqual(list(g[0].output), ["W_grad", "b_grad", "X_grad"])

    def test_mismatch(self):
        op = core.CreateOperator("FCTransposed", ["X", "W", "b"], ["Y"])
        self.assertRunOpRaises(CPU, op, [np.zeros((2, 3), np.float32), np.zeros((4, 5), np.float32),
                                         np.zeros(5, np.float32)], exception=RuntimeError,
                               regexp=r"^\[FCTransposed\] X \(2, 3\) has 3 features per row but W \(4, 5\) expects 4")
