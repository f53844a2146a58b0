"""Conv / Conv1D / Conv2D / Conv3D and their gradients (spec ops §1.2.2): numpy references,
finite-difference gradients, groups, dilation, NHWC, work split across threads, and the gradient
op's contract (its outputs, variants and shape inference). Bad input and arguments are checked in
test_conv_errors.py."""
import hypothesis.strategies as st
import numpy as np
from hypothesis import given, settings

from caffe2.python import core, workspace
import caffe2.python.hypothesis_test_util as hu
from conv_pool_reference import conv_nchw, geometry, to_nchw, to_nhwc

CPU = core.DeviceOption(0)


def rand(rng, *shape):
    return rng.randn(*shape).astype(np.float32)


class TestConv(hu.HypothesisTestCase):
    def check(self, X, W, b, grads=True, ref_args=None, **kw):
        """Reference check (NCHW) with the op's args; finite-difference check of every input.
        ref_args gives the reference's strides/dilations/pads lists when kw uses other forms."""
        n = X.ndim - 2
        k = list(W.shape[2:])
        r = ref_args or {}
        strides = r.get("strides", kw.get("strides", [kw.get("stride", 1)] * n))
        dil = r.get("dilations", kw.get("dilations", [kw.get("dilation", 1)] * n))
        pads = r.get("pads", kw.get("pads", [kw.get("pad", 0)] * 2 * n))
        outs, heads, tails = geometry(
            X.shape[2:], k, strides, dil, pads[:n], pads[n:], kw.get("legacy_pad", 0)
        )
        inputs = [X, W] + ([b] if b is not None else [])
        op = core.CreateOperator("Conv", ["X", "W", "b"][: len(inputs)], ["Y"], **kw)

        def ref(X, W, b=None):
            return [conv_nchw(X, W, b, strides, dil, heads, tails, kw.get("group", 1))]

        self.assertReferenceChecks(CPU, op, inputs, ref, threshold=1e-3)
        if grads:
            for i in range(len(inputs)):
                self.assertGradientChecks(CPU, op, inputs, i, [0])

    @given(
        n=st.integers(1, 2),
        c=st.integers(1, 3),
        m=st.integers(1, 3),
        h=st.integers(3, 6),
        w=st.integers(3, 6),
        k=st.integers(1, 3),
        stride=st.integers(1, 2),
        pad=st.integers(0, 2),
        dilation=st.integers(1, 2),
        bias=st.booleans(),
        seed=st.integers(0, 1000),
    )
    @settings(deadline=None, max_examples=8)
    def test_2d_reference_and_gradients(self, n, c, m, h, w, k, stride, pad, dilation, bias, seed):
        if dilation * (k - 1) + 1 > min(h, w) + 2 * pad:
            dilation = 1
        rng = np.random.RandomState(seed)
        self.check(
            rand(rng, n, c, h, w),
            rand(rng, m, c, k, k),
            rand(rng, m) if bias else None,
            kernel=k,
            stride=stride,
            pad=pad,
            dilation=dilation,
        )

    def test_asymmetric_pads_strides_and_kernels(self):
        rng = np.random.RandomState(0)
        X, W, b = rand(rng, 2, 2, 5, 6), rand(rng, 3, 2, 2, 3), rand(rng, 3)
        self.check(
            X,
            W,
            b,
            ref_args=dict(strides=[2, 1], pads=[1, 0, 0, 2]),
            kernel_h=2,
            kernel_w=3,
            stride_h=2,
            stride_w=1,
            pad_t=1,
            pad_l=0,
            pad_b=0,
            pad_r=2,
        )
        self.check(X, W, b, kernels=[2, 3], strides=[1, 2], dilations=[2, 1], pads=[0, 1, 2, 1])
        self.check(
            X, W, b, ref_args=dict(dilations=[2, 1]), kernels=[2, 3], dilation_h=2, dilation_w=1
        )

    def test_groups(self):
        rng = np.random.RandomState(1)
        X, W, b = rand(rng, 2, 6, 4, 4), rand(rng, 4, 3, 3, 3), rand(rng, 4)
        self.check(X, W, b, kernel=3, pad=1, group=2)
        # depthwise, strided, no bias
        self.check(rand(rng, 1, 4, 5, 5), rand(rng, 4, 1, 3, 3), None, kernel=3, stride=2, group=4)

    def test_1d_and_3d(self):
        rng = np.random.RandomState(2)
        self.check(
            rand(rng, 2, 3, 7),
            rand(rng, 2, 3, 3),
            rand(rng, 2),
            kernels=[3],
            strides=[2],
            pads=[1, 2],
        )
        self.check(rand(rng, 2, 3, 7), rand(rng, 2, 3, 3), None, kernel=3, dilation=2, group=1)
        self.check(
            rand(rng, 1, 2, 4, 3, 5),
            rand(rng, 2, 2, 2, 2, 3),
            rand(rng, 2),
            kernels=[2, 2, 3],
            strides=[1, 2, 1],
            pads=[1, 0, 1, 0, 1, 1],
        )
        self.check(
            rand(rng, 1, 2, 3, 3, 3), rand(rng, 4, 1, 2, 2, 2), rand(rng, 4), kernel=2, group=2
        )

    def test_aliases_match_conv(self):
        rng = np.random.RandomState(3)
        cases = {
            "Conv1D": (rand(rng, 1, 2, 6), rand(rng, 3, 2, 3)),
            "Conv2D": (rand(rng, 1, 2, 4, 4), rand(rng, 3, 2, 3, 3)),
            "Conv3D": (rand(rng, 1, 2, 3, 4, 4), rand(rng, 3, 2, 3, 3, 3)),
        }
        for name, (X, W) in cases.items():
            op = core.CreateOperator(name, ["X", "W"], ["Y"], kernel=3, pad=1)
            n = X.ndim - 2
            self.assertReferenceChecks(
                CPU,
                op,
                [X, W],
                lambda X, W: [conv_nchw(X, W, None, [1] * n, [1] * n, [1] * n, [1] * n)],
                threshold=1e-3,
            )
            self.assertGradientChecks(CPU, op, [X, W], 0, [0])
            grad_ops, _ = core.GradientRegistry.GetBackwardPass([op], {"Y": "Y_grad"})
            self.assertEqual(grad_ops[0].type, name + "Gradient")

    def test_pointwise(self):
        rng = np.random.RandomState(4)
        X, W, b = rand(rng, 3, 4, 3, 2), rand(rng, 5, 4, 1, 1), rand(rng, 5)
        self.check(X, W, b, kernel=1)
        self.check(X, W, b, kernel=1, stride=2)
        self.check(X, W, None, kernel=1, pad=1)

    def test_legacy_padding_modes(self):
        rng = np.random.RandomState(5)
        X, W = rand(rng, 1, 2, 7, 6), rand(rng, 2, 2, 3, 3)
        for mode in (1, 2):
            for stride in (1, 2, 3):
                self.check(X, W, None, grads=stride == 2, kernel=3, stride=stride, legacy_pad=mode)
        self.check(X, W, None, grads=False, kernel=3, stride=2, pad=1, legacy_pad=3)

    @given(nhwc_1x1=st.booleans(), seed=st.integers(0, 1000))
    @settings(deadline=None, max_examples=4)
    def test_nhwc_matches_nchw(self, nhwc_1x1, seed):
        rng = np.random.RandomState(seed)
        k = 1 if nhwc_1x1 else 3
        X, W, b = rand(rng, 2, 3, 5, 4), rand(rng, 4, 3, k, k), rand(rng, 4)
        args = dict(kernel=k, stride=1 if nhwc_1x1 else 2, pad=0 if nhwc_1x1 else 1)
        outs, heads, tails = geometry(
            X.shape[2:], [k, k], [args["stride"]] * 2, [1, 1], [args["pad"]] * 2, [args["pad"]] * 2
        )
        op = core.CreateOperator("Conv", ["X", "W", "b"], ["Y"], order="NHWC", **args)
        Xh, Wh = to_nhwc(X), to_nhwc(W)
        self.assertReferenceChecks(
            CPU,
            op,
            [Xh, Wh, b],
            lambda Xh, Wh, b: [
                to_nhwc(
                    conv_nchw(
                        to_nchw(Xh), to_nchw(Wh), b, [args["stride"]] * 2, [1, 1], heads, tails
                    )
                )
            ],
            threshold=1e-3,
        )
        for i in range(3):
            self.assertGradientChecks(CPU, op, [Xh, Wh, b], i, [0])

    def test_nhwc_dilation_and_asymmetric_pads(self):
        rng = np.random.RandomState(6)
        X, W = rand(rng, 1, 2, 6, 5), rand(rng, 3, 2, 2, 3)
        op = core.CreateOperator(
            "Conv",
            ["X", "W"],
            ["Y"],
            order="NHWC",
            kernels=[2, 3],
            dilations=[2, 1],
            pads=[1, 0, 0, 2],
        )
        self.assertReferenceChecks(
            CPU,
            op,
            [to_nhwc(X), to_nhwc(W)],
            lambda Xh, Wh: [to_nhwc(conv_nchw(X, W, None, [1, 1], [2, 1], [1, 0], [0, 2]))],
            threshold=1e-3,
        )
        self.assertGradientChecks(CPU, op, [to_nhwc(X), to_nhwc(W)], 0, [0])
        self.assertGradientChecks(CPU, op, [to_nhwc(X), to_nhwc(W)], 1, [0])

    def test_batch_split_across_threads(self):
        # Large enough that the kernels use several workers (forward and gradient partial sums).
        rng = np.random.RandomState(7)
        X, W, b = rand(rng, 6, 16, 16, 16), rand(rng, 16, 16, 3, 3), rand(rng, 16)
        for order in ("NCHW", "NHWC"):
            x, w = (X, W) if order == "NCHW" else (to_nhwc(X), to_nhwc(W))
            op = core.CreateOperator("Conv", ["X", "W", "b"], ["Y"], kernel=3, pad=1, order=order)
            fix = (lambda a: a) if order == "NCHW" else to_nhwc
            self.assertReferenceChecks(
                CPU,
                op,
                [x, w, b],
                lambda x, w, b: [fix(conv_nchw(X, W, b, [1, 1], [1, 1], [1, 1], [1, 1]))],
                threshold=1e-3,
            )
        # the gradient (with per-worker partial sums of dW and db) against an explicit reference
        dY = rand(rng, 6, 16, 16, 16)
        grad = core.CreateOperator(
            "ConvGradient", ["X", "W", "dY"], ["dW", "db", "dX"], kernel=3, pad=1
        )
        expected = self._conv_grads_3x3_pad1(X, W, dY)
        self.assertReferenceChecks(
            CPU, grad, [X, W, dY], lambda X, W, dY: expected, threshold=1e-3, atol=1e-2
        )

    def test_single_image_split_across_threads(self):
        # One image large enough that its im2col, GEMMs and col2im are split across workers; the
        # gradient must equal half that of the same image twice (which splits over images instead).
        rng = np.random.RandomState(10)
        cases = [
            (rand(rng, 1, 32, 16, 16), rand(rng, 32, 32, 3, 3), dict(kernel=3, pad=1)),
            (rand(rng, 1, 64, 32, 32), rand(rng, 64, 32, 3, 3), dict(kernel=3, stride=2, group=2)),
            (rand(rng, 1, 64, 32, 32), rand(rng, 64, 64, 1, 1), dict(kernel=1)),
        ]
        for X, W, args in cases:
            b = rand(rng, W.shape[0])
            n = 2
            strides = [args.get("stride", 1)] * n
            pads = [args.get("pad", 0)] * n
            op = core.CreateOperator("Conv", ["X", "W", "b"], ["Y"], **args)
            Y = self.assertReferenceChecks(
                CPU,
                op,
                [X, W, b],
                lambda X, W, b: [
                    conv_nchw(X, W, b, strides, [1, 1], pads, pads, args.get("group", 1))
                ],
                threshold=1e-3,
            )[0]
            dY = rand(rng, *Y.shape)
            grads = []
            for x, dy in ((X, dY), (np.concatenate([X, X]), np.concatenate([dY, dY]))):
                workspace.FeedBlob("X", x)
                workspace.FeedBlob("W", W)
                workspace.FeedBlob("dY", dy)
                workspace.RunOperatorOnce(
                    core.CreateOperator(
                        "ConvGradient", ["X", "W", "dY"], ["dW", "db", "dX"], **args
                    )
                )
                grads.append([workspace.FetchBlob(k) for k in ("dW", "db", "dX")])
            np.testing.assert_allclose(2 * grads[0][0], grads[1][0], rtol=1e-4, atol=1e-3)
            np.testing.assert_allclose(2 * grads[0][1], grads[1][1], rtol=1e-4, atol=1e-3)
            np.testing.assert_allclose(grads[0][2][0], grads[1][2][1], rtol=1e-4, atol=1e-4)
            np.testing.assert_allclose(grads[0][1], dY.sum(axis=(0, 2, 3)), rtol=1e-4, atol=1e-3)

    def test_concurrent_ops_share_scratch_safely(self):
        # Independent convs and their gradients on a 4-worker DAG net draw scratch buffers at once.
        rng = np.random.RandomState(11)
        net = core.Net("dag")
        net.Proto().type = "dag"
        net.Proto().num_workers = 4
        expected = {}
        for i in range(4):
            X, W = rand(rng, 2, 8, 12 + i, 12), rand(rng, 8, 8, 3, 3)
            workspace.FeedBlob("X%d" % i, X)
            workspace.FeedBlob("W%d" % i, W)
            net.Conv(["X%d" % i, "W%d" % i], ["Y%d" % i], kernel=3, pad=1)
            expected["Y%d" % i] = conv_nchw(X, W, None, [1, 1], [1, 1], [1, 1], [1, 1])
        net.AddGradientOperators(["Y%d" % i for i in range(4)])
        net.Proto().type = "simple"
        workspace.RunNetOnce(net)
        grads = {
            n: workspace.FetchBlob(n) for i in range(4) for n in ("W%d_grad" % i, "X%d_grad" % i)
        }
        net.Proto().type = "dag"
        for _ in range(3):
            workspace.RunNetOnce(net)
            for name, ref in expected.items():
                np.testing.assert_allclose(workspace.FetchBlob(name), ref, rtol=1e-3, atol=1e-3)
            for name, ref in grads.items():
                np.testing.assert_allclose(workspace.FetchBlob(name), ref, rtol=1e-5, atol=1e-5)

    @staticmethod
    def _conv_grads_3x3_pad1(X, W, dY):
        # Conv is linear: dW[m, c, i, j] = sum dY[n, m] * Xpad[n, c, i:i+H, j:j+W]; dX is the full
        # correlation of dY with the flipped filter.
        N, C, H, Wd = X.shape
        xp = np.pad(X.astype(np.float64), [(0, 0), (0, 0), (1, 1), (1, 1)])
        dW = np.zeros(W.shape)
        for i in range(3):
            for j in range(3):
                dW[:, :, i, j] = np.einsum("nmhw,nchw->mc", dY, xp[:, :, i : i + H, j : j + Wd])
        db = dY.sum(axis=(0, 2, 3))
        dxp = np.zeros(xp.shape)
        for i in range(3):
            for j in range(3):
                dxp[:, :, i : i + H, j : j + Wd] += np.einsum("nmhw,mc->nchw", dY, W[:, :, i, j])
        return [
            dW.astype(np.float32),
            db.astype(np.float32),
            dxp[:, :, 1:-1, 1:-1].astype(np.float32),
        ]


class TestConvGradientContract(hu.HypothesisTestCase):
    def grad_def(self, inputs, **kw):
        op = core.CreateOperator("Conv", inputs, ["Y"], kernel=3, **kw)
        ops, _ = core.GradientRegistry.GetBackwardPass([op], {"Y": "Y_grad"})
        self.assertEqual(len(ops), 1)
        args = {a.name: a for a in ops[0].arg}
        return ops[0], args

    def test_output_lists(self):
        g, args = self.grad_def(["X", "W", "b"])
        self.assertEqual(g.type, "ConvGradient")
        self.assertEqual(list(g.input), ["X", "W", "Y_grad"])
        self.assertEqual(list(g.output), ["W_grad", "b_grad", "X_grad"])
        self.assertNotIn("no_bias", args)
        g, args = self.grad_def(["X", "W", "b"], no_gradient_to_input=1)
        self.assertEqual(list(g.output), ["W_grad", "b_grad"])
        g, args = self.grad_def(["X", "W"])
        self.assertEqual(list(g.output), ["W_grad", "X_grad"])
        self.assertEqual(args["no_bias"].i, 1)
        g, args = self.grad_def(["X", "W"], no_gradient_to_input=1)
        self.assertEqual(list(g.output), ["W_grad"])
        self.assertEqual(args["no_bias"].i, 1)
        self.assertEqual(args["kernel"].i, 3)

    def test_gradient_op_variants_agree(self):
        rng = np.random.RandomState(8)
        X, W, dY = rand(rng, 2, 3, 4, 4), rand(rng, 2, 3, 3, 3), rand(rng, 2, 2, 2, 2)
        for name, v in (("X", X), ("W", W), ("dY", dY)):
            workspace.FeedBlob(name, v)
        workspace.RunOperatorOnce(
            core.CreateOperator("ConvGradient", ["X", "W", "dY"], ["dW", "db", "dX"], kernel=3)
        )
        full = [workspace.FetchBlob(n) for n in ("dW", "db", "dX")]
        np.testing.assert_allclose(full[1], dY.sum(axis=(0, 2, 3)), rtol=1e-5, atol=1e-5)
        variants = [(["a"], 1), (["a", "c"], 1), (["a", "b"], 0)]
        for outs, no_bias in variants:
            workspace.RunOperatorOnce(
                core.CreateOperator(
                    "ConvGradient", ["X", "W", "dY"], outs, kernel=3, no_bias=no_bias
                )
            )
            np.testing.assert_allclose(workspace.FetchBlob("a"), full[0], rtol=1e-5, atol=1e-5)
            if "c" in outs:
                np.testing.assert_allclose(workspace.FetchBlob("c"), full[2], rtol=1e-5, atol=1e-5)
            if "b" in outs:
                np.testing.assert_allclose(workspace.FetchBlob("b"), full[1], rtol=1e-5, atol=1e-5)

    def test_gradient_shape_inference(self):
        net = core.Net("g")
        net.Conv(["X", "W"], ["Y"], kernel=3, stride=2)
        net.AddGradientOperators(["Y"])
        shapes, _ = workspace.InferShapesAndTypes([net], {"X": [2, 3, 7, 7], "W": [4, 3, 3, 3]})
        self.assertEqual(shapes["Y"], [2, 4, 3, 3])
        self.assertEqual(shapes["W_grad"], [4, 3, 3, 3])
        self.assertEqual(shapes["X_grad"], [2, 3, 7, 7])

    def test_bad_gradient_outputs(self):
        op = core.CreateOperator("ConvGradient", ["X", "W", "dY"], ["dW"], kernel=3)
        self.assertRunOpRaises(
            CPU,
            op,
            [np.zeros((1, 1, 3, 3), np.float32)] * 2 + [np.zeros((1, 1, 1, 1), np.float32)],
            exception=RuntimeError,
            regexp=r"^\[ConvGradient\] the outputs are \[dfilter, dbias, dX\?\]",
        )
        op = core.CreateOperator("ConvGradient", ["X", "W", "dY"], ["dW", "dX"], kernel=3)
        self.assertRunOpRaises(
            CPU,
            op,
            [np.zeros((1, 1, 3, 3), np.float32)] * 3,
            exception=RuntimeError,
            regexp=r"dY \(1, 1, 3, 3\) must have the output shape \(1, 1, 1, 1\)",
        )


if __name__ == "__main__":
    import unittest

    unittest.main()
