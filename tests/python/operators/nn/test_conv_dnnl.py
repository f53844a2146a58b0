"""Conv and ConvGradient on both CPU paths: the default engine (oneDNN when the build has it, see
get_build_options()["USE_DNNL"]) and engine EIGEN (always im2col + GEMM), each against the numpy
reference (forward and all gradients) and against each other, over strides, asymmetric pads,
dilation, groups, 1x1, 1-D and 3-D, with and without bias and dX; and the cached plan of a shape
seen before."""
import hypothesis.strategies as st
import numpy as np
from hypothesis import given, settings

from caffe2.python import core, workspace
import caffe2.python.hypothesis_test_util as hu
from conv_pool_reference import conv_grad_nchw, conv_nchw, geometry

CPU = core.DeviceOption(0)
ENGINES = ("", "EIGEN")


def rand(rng, *shape):
    return rng.randn(*shape).astype(np.float32)


class TestConvBothPaths(hu.HypothesisTestCase):
    def check(self, X, W, b, strides, pads, dilations=None, group=1, grads=True, **kw):
        """Forward and gradient reference checks of both engines, then the two engines against each
        other. `pads` is [heads..., tails...]; kw may give the args in another form."""
        n = X.ndim - 2
        dilations = dilations or [1] * n
        args = kw or dict(strides=strides, pads=pads, dilations=dilations)
        if group > 1:
            args["group"] = group
        _, heads, tails = geometry(X.shape[2:], list(W.shape[2:]), strides, dilations, pads[:n], pads[n:])
        Y = conv_nchw(X, W, b, strides, dilations, heads, tails, group)
        dY = rand(np.random.RandomState(X.size), *Y.shape)
        dW, db, dX = conv_grad_nchw(X, W, dY, strides, dilations, heads, tails, group)
        inputs = [X, W] + ([b] if b is not None else [])
        results = {}
        for engine in ENGINES:
            op = core.CreateOperator("Conv", ["X", "W", "b"][:len(inputs)], ["Y"], kernels=list(W.shape[2:]),
                                     engine=engine, **args)
            fwd = self.assertReferenceChecks(CPU, op, inputs, lambda *a: [Y], threshold=1e-3, atol=1e-3)
            outs = ["dW", "db", "dX"] if b is not None else ["dW", "dX"]
            grad = core.CreateOperator("ConvGradient", ["X", "W", "dY"], outs, kernels=list(W.shape[2:]),
                                       engine=engine, no_bias=int(b is None), **args)
            ref = [dW, db, dX] if b is not None else [dW, dX]
            bwd = self.assertReferenceChecks(CPU, grad, [X, W, dY], lambda *a: ref, threshold=1e-3, atol=1e-3)
            # Without dX (no_gradient_to_input): the weights pass alone.
            grad_w = core.CreateOperator("ConvGradient", ["X", "W", "dY"], outs[:-1], kernels=list(W.shape[2:]),
                                         engine=engine, no_bias=int(b is None), **args)
            self.assertReferenceChecks(CPU, grad_w, [X, W, dY], lambda *a: ref[:-1], threshold=1e-3, atol=1e-3)
            if grads:
                for i in range(len(inputs)):
                    self.assertGradientChecks(CPU, op, inputs, i, [0])
            results[engine] = fwd + bwd
        for a, e in zip(results[""], results["EIGEN"]):
            np.testing.assert_allclose(a, e, rtol=1e-4, atol=1e-4)

    def test_build_option(self):
        self.assertIn(workspace.C.get_build_options()["USE_DNNL"], ("ON", "OFF"))

    @given(n=st.integers(1, 3), c=st.integers(1, 20), m=st.integers(1, 20), h=st.integers(4, 9),
           w=st.integers(4, 9), k=st.integers(1, 3), stride=st.integers(1, 3), dilation=st.integers(1, 2),
           pads=st.lists(st.integers(0, 2), min_size=4, max_size=4), bias=st.booleans(), seed=st.integers(0, 99))
    @settings(deadline=None, max_examples=12)
    def test_2d(self, n, c, m, h, w, k, stride, dilation, pads, bias, seed):
        if dilation * (k - 1) + 1 > min(h + pads[0] + pads[2], w + pads[1] + pads[3]):
            dilation = 1
        rng = np.random.RandomState(seed)
        self.check(rand(rng, n, c, h, w), rand(rng, m, c, k, k), rand(rng, m) if bias else None,
                   [stride, stride], pads, [dilation, dilation], grads=False)

    def test_asymmetric_pads_given_as_t_l_b_r(self):
        rng = np.random.RandomState(1)
        X, W, b = rand(rng, 2, 3, 7, 6), rand(rng, 4, 3, 3, 2), rand(rng, 4)
        self.check(X, W, b, [2, 1], [1, 0, 2, 1], pad_t=1, pad_l=0, pad_b=2, pad_r=1, stride_h=2, stride_w=1)

    def test_strides_and_dilation(self):
        rng = np.random.RandomState(2)
        self.check(rand(rng, 2, 4, 9, 8), rand(rng, 3, 4, 3, 3), rand(rng, 3), [2, 3], [1, 1, 1, 1], [2, 1])

    def test_groups_and_depthwise(self):
        rng = np.random.RandomState(3)
        self.check(rand(rng, 2, 6, 6, 6), rand(rng, 4, 3, 3, 3), rand(rng, 4), [1, 1], [1, 1, 1, 1], group=2)
        self.check(rand(rng, 2, 32, 7, 7), rand(rng, 32, 1, 3, 3), None, [2, 2], [1, 1, 1, 1], group=32,
                   grads=False)

    def test_pointwise(self):
        rng = np.random.RandomState(4)
        self.check(rand(rng, 3, 16, 5, 4), rand(rng, 32, 16, 1, 1), rand(rng, 32), [1, 1], [0, 0, 0, 0],
                   grads=False)
        self.check(rand(rng, 2, 8, 6, 6), rand(rng, 5, 8, 1, 1), None, [2, 2], [0, 0, 0, 0])

    def test_blocked_channel_counts(self):
        # Channel counts that are multiples of oneDNN's 16-channel blocks, and one that is not.
        rng = np.random.RandomState(5)
        self.check(rand(rng, 4, 32, 8, 8), rand(rng, 32, 32, 3, 3), rand(rng, 32), [1, 1], [1, 1, 1, 1],
                   grads=False)
        self.check(rand(rng, 2, 17, 7, 7), rand(rng, 33, 17, 3, 3), rand(rng, 33), [2, 2], [1, 0, 0, 1],
                   grads=False)

    def test_3x3_stride_1_where_winograd_may_win(self):
        # The shapes of a ResNet 3x3 layer, where oneDNN's Winograd forward is often the fastest
        # variant (it is timed against the direct ones on the first call); whichever is picked must
        # match the reference.
        rng = np.random.RandomState(11)
        X, W, b = rand(rng, 4, 64, 14, 14), rand(rng, 64, 64, 3, 3) * 0.1, rand(rng, 64)
        self.check(X, W, b, [1, 1], [1, 1, 1, 1], grads=False)

    def test_1d_and_3d(self):
        rng = np.random.RandomState(6)
        self.check(rand(rng, 2, 3, 9), rand(rng, 4, 3, 3), rand(rng, 4), [2], [1, 2])
        self.check(rand(rng, 1, 2, 4, 5, 5), rand(rng, 4, 1, 2, 2, 3), rand(rng, 4), [1, 2, 1],
                   [1, 0, 1, 0, 1, 1], group=2)

    def test_cached_plan_follows_new_data(self):
        # The second call of a shape reuses the cached primitives: its results must follow the new data.
        rng = np.random.RandomState(7)
        op = core.CreateOperator("Conv", ["X", "W", "b"], ["Y"], kernel=3, pad=1)
        for _ in range(3):
            X, W, b = rand(rng, 2, 16, 6, 6), rand(rng, 16, 16, 3, 3), rand(rng, 16)
            self.assertReferenceChecks(CPU, op, [X, W, b],
                                       lambda X, W, b: [conv_nchw(X, W, b, [1, 1], [1, 1], [1, 1], [1, 1])],
                                       threshold=1e-3, atol=1e-3)


if __name__ == "__main__":
    import unittest
    unittest.main()
