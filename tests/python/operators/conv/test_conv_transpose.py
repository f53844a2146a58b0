"""ConvTranspose and ConvTransposeGradient (spec ops §1.3): numpy scatter reference, output sizes
with pads and adj, groups, 1-D/3-D, NHWC, finite-difference gradients and bad input."""
import hypothesis.strategies as st
import numpy as np
from hypothesis import given, settings

from caffe2.python import core, workspace
import caffe2.python.hypothesis_test_util as hu
from conv_pool_reference import conv_transpose_nchw, to_nchw, to_nhwc

CPU = core.DeviceOption(0)


def rand(rng, *shape):
    return rng.randn(*shape).astype(np.float32)


class TestConvTranspose(hu.HypothesisTestCase):
    def check(
        self,
        X,
        W,
        b,
        r_strides,
        r_dilations,
        r_pads,
        r_adjs,
        group=1,
        order="NCHW",
        grads=True,
        **kw,
    ):
        """The r_ lists are the reference's per-dim arguments; kw go to the op."""
        n = X.ndim - 2
        strides, dilations, pads, adjs = r_strides, r_dilations, r_pads, r_adjs
        inputs = [X, W] + ([b] if b is not None else [])
        op = core.CreateOperator(
            "ConvTranspose", ["X", "W", "b"][: len(inputs)], ["Y"], order=order, group=group, **kw
        )
        if order == "NCHW":

            def ref(X, W, b=None):
                return [
                    conv_transpose_nchw(
                        X, W, b, strides, dilations, pads[:n], pads[n:], adjs, group
                    )
                ]

        else:

            def ref(X, W, b=None):
                return [
                    to_nhwc(
                        conv_transpose_nchw(
                            to_nchw(X), to_nchw(W), b, strides, dilations, pads[:n], pads[n:], adjs
                        )
                    )
                ]

        self.assertReferenceChecks(CPU, op, inputs, ref, threshold=1e-3)
        if grads:
            for i in range(len(inputs)):
                self.assertGradientChecks(CPU, op, inputs, i, [0])

    @given(
        n=st.integers(1, 2),
        c=st.integers(1, 3),
        m=st.integers(1, 3),
        h=st.integers(1, 4),
        w=st.integers(1, 4),
        k=st.integers(1, 3),
        stride=st.integers(1, 3),
        pad=st.integers(0, 1),
        adj=st.integers(0, 1),
        bias=st.booleans(),
        nhwc=st.booleans(),
        seed=st.integers(0, 1000),
    )
    @settings(deadline=None, max_examples=10)
    def test_2d(self, n, c, m, h, w, k, stride, pad, adj, bias, nhwc, seed):
        rng = np.random.RandomState(seed)
        adj = min(adj, stride)
        if 2 * pad >= (min(h, w) - 1) * stride + k + adj:
            pad = 0
        X, W, b = rand(rng, n, c, h, w), rand(rng, c, m, k, k), rand(rng, m) if bias else None
        if nhwc:
            X, W = to_nhwc(X), to_nhwc(W)
        self.check(
            X,
            W,
            b,
            [stride] * 2,
            [1, 1],
            [pad] * 4,
            [adj] * 2,
            order="NHWC" if nhwc else "NCHW",
            kernel=k,
            stride=stride,
            pad=pad,
            adj=adj,
        )

    def test_argument_forms_groups_dilation_and_nd(self):
        rng = np.random.RandomState(0)
        X, W, b = rand(rng, 2, 4, 3, 2), rand(rng, 4, 3, 2, 3), rand(rng, 6)
        self.check(
            X,
            W,
            b,
            [2, 1],
            [1, 1],
            [1, 0, 0, 1],
            [1, 0],
            group=2,
            kernel_h=2,
            kernel_w=3,
            stride_h=2,
            stride_w=1,
            pad_t=1,
            pad_l=0,
            pad_b=0,
            pad_r=1,
            adj_h=1,
            adj_w=0,
        )
        self.check(
            X[:, :2],
            W[:2],
            None,
            [1, 2],
            [2, 1],
            [0, 1, 1, 0],
            [0, 2],
            kernels=[2, 3],
            strides=[1, 2],
            dilations=[2, 1],
            pads=[0, 1, 1, 0],
            adjs=[0, 2],
        )
        self.check(
            rand(rng, 2, 3, 4),
            rand(rng, 3, 2, 3),
            rand(rng, 2),
            [2],
            [1],
            [1, 0],
            [1],
            kernel=3,
            stride=2,
            pads=[1, 0],
            adj=1,
        )
        self.check(
            rand(rng, 1, 2, 2, 3, 2),
            rand(rng, 2, 2, 2, 1, 2),
            None,
            [2, 1, 1],
            [1, 1, 1],
            [0] * 6,
            [0] * 3,
            kernels=[2, 1, 2],
            strides=[2, 1, 1],
        )
        # 1x1 stride 1 (no columns), both orders
        X, W, b = rand(rng, 2, 3, 3, 2), rand(rng, 3, 4, 1, 1), rand(rng, 4)
        self.check(X, W, b, [1, 1], [1, 1], [0] * 4, [0, 0], kernel=1)
        self.check(
            to_nhwc(X), to_nhwc(W), b, [1, 1], [1, 1], [0] * 4, [0, 0], order="NHWC", kernel=1
        )

    def test_legacy_pad_modes_mean_no_pads(self):
        rng = np.random.RandomState(1)
        X, W = rand(rng, 1, 2, 3, 3), rand(rng, 2, 2, 3, 3)
        for mode in (1, 2):
            self.check(
                X,
                W,
                None,
                [2, 2],
                [1, 1],
                [0] * 4,
                [0, 0],
                grads=False,
                kernel=3,
                stride=2,
                legacy_pad=mode,
            )

    def test_threads(self):
        rng = np.random.RandomState(2)
        X, W, b = rand(rng, 6, 16, 12, 12), rand(rng, 16, 16, 3, 3), rand(rng, 16)
        self.check(
            X, W, b, [2, 2], [1, 1], [1] * 4, [1, 1], grads=False, kernel=3, stride=2, pad=1, adj=1
        )
        self.check(
            to_nhwc(X),
            to_nhwc(W),
            b,
            [2, 2],
            [1, 1],
            [1] * 4,
            [1, 1],
            order="NHWC",
            grads=False,
            kernel=3,
            stride=2,
            pad=1,
            adj=1,
        )
        dY = rand(rng, 6, 16, 24, 24)
        op = core.CreateOperator(
            "ConvTransposeGradient",
            ["X", "W", "dY"],
            ["dW", "db", "dX"],
            kernel=3,
            stride=2,
            pad=1,
            adj=1,
        )

        def ref(X, W, dY):
            # the input gradient of a transposed conv is the conv of dY; dW pairs X with dY's
            # windows
            dyp = np.pad(dY.astype(np.float64), [(0, 0), (0, 0), (1, 0), (1, 0)])
            dX = np.zeros(X.shape)
            dW = np.zeros(W.shape)
            for i in range(3):
                for j in range(3):
                    win = dyp[:, :, i : i + 23 : 2, j : j + 23 : 2]
                    dX += np.einsum("cm,nmhw->nchw", W[:, :, i, j], win)
                    dW[:, :, i, j] = np.einsum("nchw,nmhw->cm", X, win)
            return [dW.astype(np.float32), dY.sum(axis=(0, 2, 3)), dX.astype(np.float32)]

        self.assertReferenceChecks(CPU, op, [X, W, dY], ref, threshold=1e-3, atol=1e-2)

    def test_gradient_contract(self):
        op = core.CreateOperator("ConvTranspose", ["X", "W", "b"], ["Y"], kernel=2)
        g = core.GradientRegistry.GetBackwardPass([op], {"Y": "Y_grad"})[0][0]
        self.assertEqual(
            (g.type, list(g.input), list(g.output)),
            ("ConvTransposeGradient", ["X", "W", "Y_grad"], ["W_grad", "b_grad", "X_grad"]),
        )
        op = core.CreateOperator(
            "ConvTranspose", ["X", "W"], ["Y"], kernel=2, no_gradient_to_input=1
        )
        g = core.GradientRegistry.GetBackwardPass([op], {"Y": "Y_grad"})[0][0]
        self.assertEqual(list(g.output), ["W_grad"])
        self.assertEqual([a.i for a in g.arg if a.name == "no_bias"], [1])

    def test_shape_inference(self):
        net = core.Net("t")
        net.ConvTranspose(["x", "w"], ["y"], kernel=3, stride=2, pad=1, adj=1)
        net.ConvTranspose(["v", "u"], ["z"], kernel=2, stride=2, order="NHWC")
        net.AddGradientOperators(["y"])
        shapes, _ = workspace.InferShapesAndTypes(
            [net], {"x": [2, 3, 4, 5], "w": [3, 6, 3, 3], "v": [1, 3, 3, 4], "u": [4, 2, 2, 5]}
        )
        self.assertEqual(shapes["y"], [2, 6, 8, 10])
        self.assertEqual(shapes["z"], [1, 6, 6, 5])
        self.assertEqual(shapes["w_grad"], [3, 6, 3, 3])
        self.assertEqual(shapes["x_grad"], [2, 3, 4, 5])

    def test_errors(self):
        X = np.zeros((1, 4, 3, 3), np.float32)

        def raises(inputs, regexp, **kw):
            op = core.CreateOperator("ConvTranspose", ["X", "W", "b"][: len(inputs)], ["Y"], **kw)
            self.assertRunOpRaises(CPU, op, inputs, exception=RuntimeError, regexp=regexp)

        raises(
            [X, np.zeros((3, 2, 3, 3), np.float32)],
            r"^\[ConvTranspose\] X \(1, 4, 3, 3\) has 4 channels but filter \(3, 2, 3, 3\) "
            r"expects 3",
            kernel=3,
        )
        raises(
            [X, np.zeros((4, 2, 2, 2), np.float32)],
            r"filter \(4, 2, 2, 2\) has kernel \(2, 2\) but the op's " r"kernel is \(3, 3\)",
            kernel=3,
        )
        raises(
            [X, np.zeros((4, 2, 3, 3), np.float32)],
            r"adj 3 must not exceed the stride 2",
            kernel=3,
            stride=2,
            adj=3,
        )
        raises(
            [X, np.zeros((4, 2, 1, 1), np.float32)],
            r"pads 2 \+ 2 remove the whole output 3",
            kernel=1,
            pad=2,
        )
        raises(
            [X, np.zeros((4, 2, 3, 3), np.float32)],
            r"CAFFE_LEGACY_POOLING does not apply",
            kernel=3,
            legacy_pad=3,
        )
        raises(
            [X, np.zeros((4, 2, 3, 3), np.float32)],
            r"legacy_pad SAME computes the pads itself",
            kernel=3,
            legacy_pad=2,
            pad=1,
        )
        raises(
            [X, np.zeros((4, 2, 3, 3), np.float32), np.zeros(3, np.float32)],
            r"bias \(3,\) must hold 2 floats",
            kernel=3,
        )
        raises(
            [np.zeros((1, 3, 3, 3), np.float32), np.zeros((3, 2, 3, 3), np.float32)],
            r"X \(1, 3, 3, 3\) has 3 channels, not divisible by group 2",
            kernel=3,
            group=2,
        )


if __name__ == "__main__":
    import unittest

    unittest.main()
