"""LayerNorm and LayerNormGradient: reference over axis, moments shapes, gradient, errors."""
import hypothesis.strategies as st
import numpy as np
from hypothesis import given, settings

from caffe2.python import core
import caffe2.python.hypothesis_test_util as hu

CPU = core.DeviceOption(0)


def layer_norm_ref(X, axis, eps):
    lead = X.shape[:axis]
    x = X.reshape(int(np.prod(lead)), -1).astype(np.float64)
    mean = x.mean(axis=1, keepdims=True)
    stdev = np.sqrt(x.var(axis=1, keepdims=True) + eps)
    Y = ((x - mean) / stdev).reshape(X.shape)
    mshape = tuple(lead) + (1,)
    return [Y.astype(np.float32), mean.reshape(mshape).astype(np.float32),
            stdev.reshape(mshape).astype(np.float32)]


class TestLayerNorm(hu.HypothesisTestCase):
    @given(shape=st.lists(st.integers(3, 4), min_size=2, max_size=4), axis=st.integers(1, 3),
           eps=st.sampled_from([1e-5, 1e-2]), seed=st.integers(0, 1000))
    @settings(deadline=None, max_examples=10)
    def test_reference_and_gradient(self, shape, axis, eps, seed):
        # Well-spread rows: finite differences of a near-constant row are not meaningful.
        X = np.random.RandomState(seed).randn(*shape).astype(np.float32)
        axis = min(axis, X.ndim - 1)
        op = core.CreateOperator("LayerNorm", ["X"], ["Y", "mean", "stdev"], axis=axis, epsilon=eps)
        self.assertReferenceChecks(CPU, op, [X], lambda X: layer_norm_ref(X, axis, eps), threshold=1e-3)
        self.assertGradientChecks(CPU, op, [X], 0, [0], stepsize=0.005, threshold=0.02)

    def test_gradient_def(self):
        op = core.CreateOperator("LayerNorm", ["X"], ["Y", "m", "s"])
        g, _ = core.GradientRegistry.GetGradientForOp(op, ["Y_grad", None, None])
        self.assertEqual(g[0].type, "LayerNormGradient")
        self.assertEqual(list(g[0].input), ["Y_grad", "Y", "m", "s", "X"])
        self.assertEqual(list(g[0].output), ["X_grad"])

    def test_errors(self):
        op = core.CreateOperator("LayerNorm", ["X"], ["Y", "m", "s"], axis=2)
        self.assertRunOpRaises(CPU, op, [np.zeros((2, 3), np.float32)], exception=RuntimeError,
                               regexp=r"^\[LayerNorm\] axis 2 out of range for X \(2, 3\)")
