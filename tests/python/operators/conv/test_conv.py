"""Conv / Conv1D / Conv2D / Conv3D and their gradients (spec ops §1.2.2): numpy references,
finite-difference gradients, groups, dilation, NHWC, shape inference and bad input."""
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


class TestConvErrors(hu.HypothesisTestCase):
    def raises(self, inputs, regexp, op_type="Conv", **kw):
        names = ["X", "W", "b"][: len(inputs)]
        op = core.CreateOperator(op_type, names, ["Y"], **kw)
        self.assertRunOpRaises(CPU, op, inputs, exception=RuntimeError, regexp=regexp)

    def test_shape_errors(self):
        X = np.zeros((1, 3, 5, 5), np.float32)
        self.raises(
            [X, np.zeros((2, 2, 3, 3), np.float32)],
            r"^\[Conv\] X \(1, 3, 5, 5\) has 3 channels but filter \(2, 2, 3, 3\) expects 2\n",
            kernel=3,
        )
        self.raises(
            [np.zeros((1, 4, 5, 5), np.float32), np.zeros((2, 1, 3, 3), np.float32)],
            r"X \(1, 4, 5, 5\) has 4 channels but filter \(2, 1, 3, 3\) expects 1 per group "
            r"x group 2 = 2",
            kernel=3,
            group=2,
        )
        self.raises(
            [np.zeros((1, 4, 5, 5), np.float32), np.zeros((3, 2, 3, 3), np.float32)],
            r"filter \(3, 2, 3, 3\) has 3 output channels, not divisible by group 2",
            kernel=3,
            group=2,
        )
        self.raises(
            [X, np.zeros((2, 3, 3, 3), np.float32)],
            r"filter \(2, 3, 3, 3\) has kernel \(3, 3\) but the op's kernel is \(2, 2\)",
            kernel=2,
        )
        self.raises(
            [X, np.zeros((2, 3, 3), np.float32)],
            r"filter \(2, 3, 3\) must have 4 dims like X",
            kernel=3,
        )
        self.raises(
            [X, np.zeros((2, 3, 3, 3), np.float32), np.zeros(3, np.float32)],
            r"bias \(3,\) must hold 2 floats",
            kernel=3,
        )
        self.raises(
            [X, np.zeros((2, 3, 7, 7), np.float32)],
            r"kernel 7 is larger than the padded input 6 \(size 5 \+ pads 1 \+ 0\) "
            r"in spatial dim 0",
            kernel=7,
            pads=[1, 0, 0, 0],
        )
        self.raises(
            [X, np.zeros((2, 3, 3, 3), np.float32)],
            r"kernel 3 \(dilated 7\) is larger than the padded input 5",
            kernel=3,
            dilation=3,
        )
        self.raises(
            [np.zeros((3, 5), np.float32), np.zeros((2, 3), np.float32)],
            r"X \(3, 5\) must have 3 to 5 dims",
            kernel=3,
        )
        self.raises(
            [X.astype(np.float64), np.zeros((2, 3, 3, 3), np.float32)],
            r"X must be a float tensor, got double",
            kernel=3,
        )
        self.raises(
            [X, np.zeros((2, 3, 3), np.float32)],
            r"'kernels' gives 1 kernel sizes but the input has 2 spatial dims",
            kernels=[3],
        )

    def test_argument_errors(self):
        X, W = np.zeros((1, 3, 5, 5), np.float32), np.zeros((2, 3, 3, 3), np.float32)
        self.raises([X, W], r"^\[Conv\] the kernel size is not set")
        self.raises(
            [X, W],
            r"legacy_pad VALID computes the pads itself; remove the explicit 'pad'",
            kernel=3,
            pad=1,
            legacy_pad=1,
        )
        self.raises(
            [X, W],
            r"legacy_pad SAME computes the pads itself; remove the explicit 'pads'",
            kernel=3,
            pads=[0, 0, 0, 0],
            legacy_pad=2,
        )
        self.raises(
            [X, W],
            r"legacy_pad SAME computes the pads itself; remove the explicit 'pad_t'/",
            kernel=3,
            pad_t=0,
            pad_l=0,
            pad_b=0,
            pad_r=0,
            legacy_pad=2,
        )
        self.raises(
            [X, W],
            r"legacy_pad must be 0 \(NOTSET\), 1 \(VALID\), 2 \(SAME\) or 3",
            kernel=3,
            legacy_pad=4,
        )
        self.raises(
            [X, W], r"legacy_pad SAME does not support dilation", kernel=3, dilation=2, legacy_pad=2
        )
        self.raises([X, W], r"group 3 needs order NCHW", kernel=3, group=3, order="NHWC")
        self.raises(
            [X, W], r"group 3 cannot be combined with dilation", kernel=3, group=3, dilation=2
        )
        self.raises([X, W], r"group must be at least 1, got 0", kernel=3, group=0)
        self.raises(
            [X, W], r"order must be \"NCHW\" or \"NHWC\", got \"CHW\"", kernel=3, order="CHW"
        )
        self.raises(
            [X, W],
            r"'kernel_h' and 'kernel_w' must be given together, got only 'kernel_h'",
            kernel_h=3,
        )
        self.raises(
            [X, W],
            r"'kernels' = \(3, 3\) and 'kernel' = 5 disagree; give one of 'kernel', "
            r"'kernel_h'/'kernel_w' or 'kernels'",
            kernel=5,
            kernels=[3, 3],
        )
        self.raises(
            [X, W],
            r"'pad_t'/'pad_l'/'pad_b'/'pad_r' = \(1, 1, 1, 0\) and 'pad' = 1 disagree",
            kernel=3,
            pad=1,
            pad_t=1,
            pad_l=1,
            pad_b=1,
            pad_r=0,
        )
        self.raises(
            [X, W],
            r"'strides' = \(1, 2\) and 'stride_h'/'stride_w' = \(2, 1\) disagree",
            kernel=3,
            strides=[1, 2],
            stride_h=2,
            stride_w=1,
        )
        self.raises(
            [X, W],
            r"'pad_t', 'pad_l', 'pad_b' and 'pad_r' must be given together, got only 2",
            kernel=3,
            pad_t=1,
            pad_b=1,
        )
        self.raises(
            [X, W], r"strides must be positive, got 'strides' = \(1, 0\)", kernel=3, strides=[1, 0]
        )
        # (core's argument reader currently rejects every negative int before the op sees it)
        self.raises(
            [X, W],
            r"pads must be non-negative, got 'pad' = -1|Argument 'pad' value -1",
            kernel=3,
            pad=-1,
        )
        self.raises(
            [X, W],
            r"kernel sizes must be positive, got 'kernel_h'/'kernel_w' = \(3, 0\)",
            kernel_h=3,
            kernel_w=0,
        )
        self.raises(
            [X, W],
            r"'pads' gives 2 pads but the input has 2 spatial dims \(pads hold heads then tails\)",
            kernel=3,
            pads=[1, 1],
        )
        self.raises(
            [X, W], r"Argument 'stride' does not have the right field", kernel=3, stride=1.0
        )

    def test_not_in_place(self):
        op = core.CreateOperator("Conv", ["X", "W"], ["X"], kernel=1)
        with self.assertRaises(RuntimeError):
            workspace.FeedBlob("X", np.zeros((1, 1, 2, 2), np.float32))
            workspace.FeedBlob("W", np.zeros((1, 1, 1, 1), np.float32))
            workspace.RunOperatorOnce(op)

    def test_engine_falls_back(self):
        rng = np.random.RandomState(9)
        X, W = rand(rng, 1, 2, 4, 4), rand(rng, 2, 2, 3, 3)
        op = core.CreateOperator(
            "Conv",
            ["X", "W"],
            ["Y"],
            kernel=3,
            engine="CUDNN",
            exhaustive_search=1,
            ws_nbytes_limit=1024,
            use_cudnn=True,
        )
        self.assertReferenceChecks(
            CPU,
            op,
            [X, W],
            lambda X, W: [conv_nchw(X, W, None, [1, 1], [1, 1], [0, 0], [0, 0])],
            threshold=1e-3,
        )


if __name__ == "__main__":
    import unittest

    unittest.main()
