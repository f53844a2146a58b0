"""InstanceNorm and InstanceNormGradient: reference (NCHW/NHWC, 1 or 3 outputs), gradients, in place."""
import hypothesis.strategies as st
import numpy as np
from hypothesis import given, settings

from caffe2.python import core
import caffe2.python.hypothesis_test_util as hu

CPU = core.DeviceOption(0)


def instance_norm_ref(X, scale, bias, eps, order):
    x = (X if order == "NCHW" else np.moveaxis(X, -1, 1)).astype(np.float64)
    axes = tuple(range(2, x.ndim))
    mean = x.mean(axis=axes, keepdims=True)
    inv_std = 1 / np.sqrt(x.var(axis=axes, keepdims=True) + eps)
    cs = (1, -1) + (1,) * (x.ndim - 2)
    Y = (x - mean) * inv_std * scale.reshape(cs) + bias.reshape(cs)
    if order == "NHWC":
        Y = np.moveaxis(Y, 1, -1)
    n, c = x.shape[:2]
    return [Y.astype(np.float32), mean.reshape(n, c).astype(np.float32), inv_std.reshape(n, c).astype(np.float32)]


class TestInstanceNorm(hu.HypothesisTestCase):
    @given(n=st.integers(1, 3), c=st.integers(1, 3), hw=st.sampled_from([(3,), (2, 2), (2, 1, 2)]),
           order=st.sampled_from(["NCHW", "NHWC"]), seed=st.integers(0, 1000), outputs=st.sampled_from([1, 2, 3]),
           in_place=st.booleans())
    @settings(deadline=None, max_examples=10)
    def test_reference_and_gradient(self, n, c, hw, order, seed, outputs, in_place):
        rng = np.random.RandomState(seed)
        shape = (n, c) + hw if order == "NCHW" else (n,) + hw + (c,)
        X = rng.randn(*shape).astype(np.float32)
        scale = (rng.rand(c) + 0.5).astype(np.float32)
        bias = rng.randn(c).astype(np.float32)
        outs = (["X"] if in_place else ["Y"]) + ["mean", "inv_std"][:outputs - 1]
        op = core.CreateOperator("InstanceNorm", ["X", "scale", "bias"], outs, epsilon=1e-3, order=order)
        self.assertReferenceChecks(CPU, op, [X, scale, bias],
                                   lambda *a: instance_norm_ref(*a, 1e-3, order)[:outputs], threshold=1e-3)
        if not in_place:
            for i in range(3):
                self.assertGradientChecks(CPU, op, [X, scale, bias], i, [0], stepsize=0.01, threshold=0.02)

    def test_gradient_defs(self):
        op = core.CreateOperator("InstanceNorm", ["X", "s", "b"], ["Y", "m", "is"])
        g, _ = core.GradientRegistry.GetGradientForOp(op, ["Y_grad", None, None])
        self.assertEqual(g[0].type, "InstanceNormGradient")
        self.assertEqual(list(g[0].input), ["X", "s", "b", "Y_grad", "m", "is"])
        self.assertEqual(list(g[0].output), ["X_grad", "s_grad", "b_grad"])
        op = core.CreateOperator("InstanceNorm", ["X", "s", "b"], ["Y"])
        g, _ = core.GradientRegistry.GetGradientForOp(op, ["Y_grad"])
        self.assertEqual(list(g[0].input), ["X", "s", "b", "Y_grad"])

    def test_errors(self):
        op = core.CreateOperator("InstanceNorm", ["X", "s", "b"], ["Y"])
        X = np.zeros((2, 3, 4), np.float32)
        self.assertRunOpRaises(CPU, op, [X, np.ones(2, np.float32), np.zeros(3, np.float32)],
                               exception=RuntimeError, regexp=r"^\[InstanceNorm\] scale \(2,\) must hold 3 floats")
        op4 = core.CreateOperator("InstanceNorm", ["X", "s", "b"], ["Y", "m", "i", "j"])
        self.assertRunOpRaises(CPU, op4, [X, np.ones(3, np.float32), np.zeros(3, np.float32)],
                               exception=RuntimeError, regexp="4 outputs given, but the op produces 1 to 3")
        op5 = core.CreateOperator("InstanceNorm", ["X", "s", "b"], ["Y"], order="CHW")
        self.assertRunOpRaises(CPU, op5, [X, np.ones(3, np.float32), np.zeros(3, np.float32)],
                               exception=RuntimeError, regexp="order must be NCHW or NHWC, got 'CHW'")
