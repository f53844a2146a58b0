"""SpatialBN and SpatialBNGradient: test and training mode (NCHW/NHWC), running statistics in place,
the num_batches (7-input) form, gradients against numpy formulas and finite differences, errors,
and a training net built by autodiff. The device checks (cuDNN and CUDA kernels against the CPU)
are in test_spatial_bn_device.py."""
import hypothesis.strategies as st
import numpy as np
from hypothesis import given, settings

from caffe2.python import core, workspace
import caffe2.python.hypothesis_test_util as hu

CPU = core.DeviceOption(0)


def to_nchw(X, order):
    return X if order == "NCHW" else np.moveaxis(X, -1, 1)


def from_nchw(X, order):
    return X if order == "NCHW" else np.moveaxis(X, 1, -1)


def channel_shape(X, order):
    shape = [1] * X.ndim
    shape[1 if order == "NCHW" else -1] = -1
    return shape


def reduce_axes(X, order):
    c = 1 if order == "NCHW" else X.ndim - 1
    return tuple(i for i in range(X.ndim) if i != c)


def bn_train_ref(X, scale, bias, rm, rv, order="NCHW", eps=1e-5, momentum=0.9):
    axes = reduce_axes(X, order)
    cs = channel_shape(X, order)
    mean = X.astype(np.float64).mean(axis=axes)
    var = X.astype(np.float64).var(axis=axes)
    inv_std = 1 / np.sqrt(var + eps)
    Y = (X - mean.reshape(cs)) * inv_std.reshape(cs) * scale.reshape(cs) + bias.reshape(cs)
    f = np.float32
    return [
        Y.astype(f),
        (rm * momentum + mean * (1 - momentum)).astype(f),
        (rv * momentum + var * (1 - momentum)).astype(f),
        mean.astype(f),
        inv_std.astype(f),
    ]


def bn_grad_ref(X, scale, dY, mean, inv_std, order="NCHW"):
    axes = reduce_axes(X, order)
    cs = channel_shape(X, order)
    M = X.size // scale.size
    xhat = (X - mean.reshape(cs)) * inv_std.reshape(cs)
    dbias = dY.sum(axis=axes)
    dscale = (xhat * dY).sum(axis=axes)
    dX = (
        (scale * inv_std).reshape(cs) / M * (M * dY - dbias.reshape(cs) - xhat * dscale.reshape(cs))
    )
    return dX.astype(np.float32), dscale.astype(np.float32), dbias.astype(np.float32)


def bn_inputs(rng, n, c, spatial, order):
    shape = (n, c) + spatial if order == "NCHW" else (n,) + spatial + (c,)
    X = rng.randn(*shape).astype(np.float32)
    scale = (rng.rand(c) + 0.5).astype(np.float32)
    bias = rng.randn(c).astype(np.float32)
    mean = rng.randn(c).astype(np.float32)
    var = (rng.rand(c) + 0.5).astype(np.float32)
    return X, scale, bias, mean, var


orders = st.sampled_from(["NCHW", "NHWC"])

spatials = st.sampled_from([(3,), (2, 3), (2, 1, 2)])


class TestSpatialBN(hu.HypothesisTestCase):
    @given(
        n=st.integers(1, 3),
        c=st.integers(1, 3),
        spatial=spatials,
        order=orders,
        seed=st.integers(0, 1000),
        in_place=st.booleans(),
    )
    @settings(deadline=None, max_examples=10)
    def test_test_mode(self, n, c, spatial, order, seed, in_place):
        rng = np.random.RandomState(seed)
        inputs = bn_inputs(rng, n, c, spatial, order)
        op = core.CreateOperator(
            "SpatialBN",
            ["X", "scale", "bias", "mean", "var"],
            ["X" if in_place else "Y"],
            is_test=1,
            epsilon=1e-3,
            order=order,
        )

        def ref(X, scale, bias, mean, var):
            cs = channel_shape(X, order)
            return [
                (
                    (X - mean.reshape(cs)) / np.sqrt(var.reshape(cs) + 1e-3) * scale.reshape(cs)
                    + bias.reshape(cs)
                ).astype(np.float32)
            ]

        self.assertReferenceChecks(CPU, op, list(inputs), ref)
        if not in_place:
            for i in range(3):
                self.assertGradientChecks(CPU, op, list(inputs), i, [0])

    @given(
        n=st.integers(1, 3),
        c=st.integers(1, 3),
        spatial=spatials,
        order=orders,
        seed=st.integers(0, 1000),
        momentum=st.sampled_from([0.9, 0.1, 0.0, 1.0]),
        in_place=st.booleans(),
    )
    @settings(deadline=None, max_examples=10)
    def test_training_mode(self, n, c, spatial, order, seed, momentum, in_place):
        rng = np.random.RandomState(seed)
        inputs = bn_inputs(rng, n, c, spatial, order)
        op = core.CreateOperator(
            "SpatialBN",
            ["X", "scale", "bias", "rm", "rv"],
            ["X" if in_place else "Y", "rm", "rv", "sm", "siv"],
            is_test=0,
            order=order,
            momentum=momentum,
        )
        self.assertReferenceChecks(
            CPU,
            op,
            list(inputs),
            lambda *a: bn_train_ref(*a, order=order, momentum=momentum),
            threshold=1e-3,
        )

    @given(
        n=st.integers(1, 3),
        c=st.integers(1, 3),
        spatial=spatials,
        order=orders,
        seed=st.integers(0, 1000),
    )
    @settings(deadline=None, max_examples=8)
    def test_training_gradient(self, n, c, spatial, order, seed):
        rng = np.random.RandomState(seed)
        inputs = list(bn_inputs(rng, n, c, spatial, order))
        if inputs[0].size // c < 2:
            return
        op = core.CreateOperator(
            "SpatialBN",
            ["X", "scale", "bias", "rm", "rv"],
            ["Y", "rm", "rv", "sm", "siv"],
            is_test=0,
            order=order,
        )
        for i in range(3):
            self.assertGradientChecks(CPU, op, inputs, i, [0], stepsize=0.01, threshold=0.02)
        # The gradient op against the numpy formulas.
        X, scale = inputs[0], inputs[1]
        _, _, _, mean, inv_std = bn_train_ref(*inputs, order=order)
        dY = rng.randn(*X.shape).astype(np.float32)
        gop = core.CreateOperator(
            "SpatialBNGradient", ["X", "scale", "dY", "sm", "siv"], ["dX", "ds", "db"], order=order
        )
        self.assertReferenceChecks(
            CPU,
            gop,
            [X, scale, dY, mean, inv_std],
            lambda *a: bn_grad_ref(*a, order=order),
            threshold=1e-3,
        )

    def test_gradient_defs(self):
        op = core.CreateOperator(
            "SpatialBN", ["X", "s", "b", "rm", "rv"], ["Y", "rm", "rv", "sm", "siv"]
        )
        g, _ = core.GradientRegistry.GetGradientForOp(op, ["Y_grad", None, None, None, None])
        self.assertEqual(g[0].type, "SpatialBNGradient")
        self.assertEqual(list(g[0].input), ["X", "s", "Y_grad", "sm", "siv"])
        self.assertEqual(list(g[0].output), ["X_grad", "s_grad", "b_grad"])
        op = core.CreateOperator(
            "SpatialBN",
            ["X", "s", "b", "rm", "rv", "sums", "sumsq"],
            ["Y", "rm", "rv", "sm", "siv"],
            num_batches=2,
        )
        g, _ = core.GradientRegistry.GetGradientForOp(op, ["Y_grad", None, None, None, None])
        self.assertEqual(list(g[0].input), ["X", "s", "Y_grad", "sm", "siv", "s_grad", "b_grad"])
        op = core.CreateOperator("SpatialBN", ["X", "s", "b", "m", "v"], ["Y"], is_test=1)
        g, _ = core.GradientRegistry.GetGradientForOp(op, ["Y_grad"])
        self.assertEqual(list(g[0].input), ["X", "s", "Y_grad", "m", "v"])

    def test_num_batches_matches_the_whole_batch(self):
        rng = np.random.RandomState(0)
        X, scale, bias, rm, rv = bn_inputs(rng, 4, 3, (2, 2), "NCHW")
        halves = [X[:2], X[2:]]
        sums = sum(h.sum(axis=(0, 2, 3)) for h in halves).astype(np.float32)
        sumsq = sum((h.astype(np.float64) ** 2).sum(axis=(0, 2, 3)) for h in halves).astype(
            np.float32
        )
        op = core.CreateOperator(
            "SpatialBN",
            ["X", "scale", "bias", "rm", "rv", "sums", "sumsq"],
            ["Y", "rm", "rv", "sm", "siv"],
            num_batches=2,
        )
        full = bn_train_ref(X, scale, bias, rm, rv)
        Yh = full[0][:2]
        self.assertReferenceChecks(
            CPU,
            op,
            [halves[0], scale, bias, rm, rv, sums, sumsq],
            lambda *a: [Yh] + full[1:],
            threshold=1e-3,
        )
        # Gradient with aggregated dscale/dbias (the sums over both halves) divided by num_batches.
        dY = rng.randn(*X.shape).astype(np.float32)
        dX_full, ds_full, db_full = bn_grad_ref(X, scale, dY, full[3], full[4])
        gop = core.CreateOperator(
            "SpatialBNGradient",
            ["X", "scale", "dY", "sm", "siv", "ds", "db"],
            ["dX", "ds", "db"],
            num_batches=2,
        )
        self.assertReferenceChecks(
            CPU,
            gop,
            [halves[0], scale, dY[:2], full[3], full[4], ds_full, db_full],
            lambda *a: [dX_full[:2], ds_full / 2, db_full / 2],
            threshold=1e-3,
        )

    def test_running_stats_created_when_empty(self):
        X = np.random.randn(2, 3, 4).astype(np.float32)
        workspace.FeedBlob("X", X)
        workspace.FeedBlob("s", np.ones(3, np.float32))
        workspace.FeedBlob("b", np.zeros(3, np.float32))
        workspace.FeedBlob("rm", np.zeros(0, np.float32))
        workspace.FeedBlob("rv", np.zeros(0, np.float32))
        workspace.RunOperatorOnce(
            core.CreateOperator(
                "SpatialBN",
                ["X", "s", "b", "rm", "rv"],
                ["Y", "rm", "rv", "sm", "siv"],
                momentum=0.5,
            )
        )
        np.testing.assert_allclose(
            workspace.FetchBlob("rm"), 0.5 * X.mean(axis=(0, 2)), rtol=1e-4, atol=1e-5
        )
        np.testing.assert_allclose(
            workspace.FetchBlob("rv"), 0.5 * X.var(axis=(0, 2)), rtol=1e-4, atol=1e-5
        )

    def test_errors(self):
        X, s, b, m, v = bn_inputs(np.random.RandomState(1), 2, 3, (2,), "NCHW")
        names = ["X", "s", "b", "m", "v"]

        def raises(op, inputs, regexp):
            self.assertRunOpRaises(CPU, op, inputs, exception=RuntimeError, regexp=regexp)

        raises(
            core.CreateOperator("SpatialBN", names, ["Y"], is_test=0),
            [X, s, b, m, v],
            r"^\[SpatialBN\] training \(is_test=0\) needs 5 outputs",
        )
        raises(
            core.CreateOperator("SpatialBN", names, ["Y", "m", "v", "sm", "siv"], is_test=1),
            [X, s, b, m, v],
            r"test mode \(is_test=1\) produces exactly 1 output, got 5",
        )
        raises(
            core.CreateOperator("SpatialBN", names, ["Y"], is_test=1, epsilon=0.0),
            [X, s, b, m, v],
            "epsilon must be > 0, got 0",
        )
        raises(
            core.CreateOperator("SpatialBN", names, ["Y", "m", "v", "sm", "siv"], momentum=1.5),
            [X, s, b, m, v],
            r"momentum must be in \[0, 1\], got 1.5",
        )
        raises(
            core.CreateOperator("SpatialBN", names, ["Y"], is_test=1, order="NCWH"),
            [X, s, b, m, v],
            "order must be NCHW or NHWC, got 'NCWH'",
        )
        raises(
            core.CreateOperator("SpatialBN", names, ["Y"], is_test=1),
            [X, s[:2], b, m, v],
            r"scale \(2,\) must hold 3 floats",
        )
        raises(
            core.CreateOperator("SpatialBN", names, ["Y"], is_test=1),
            [X[0], s, b, m, v],
            r"X must have rank 3 to 5, got \(3, 2\)",
        )
        raises(
            core.CreateOperator("SpatialBN", names, ["Y", "m", "v", "sm", "siv"], num_batches=2),
            [X, s, b, m, v],
            r"num_batches 2 needs the sums and sumsq inputs",
        )
        with self.assertRaisesRegex(RuntimeError, "must be the same blob: this op runs in place"):
            workspace.FeedBlob("X", X)
            workspace.RunOperatorOnce(
                core.CreateOperator("SpatialBN", names, ["Y", "rm2", "v", "sm", "siv"])
            )


class TestSpatialBNInANet(hu.HypothesisTestCase):
    def test_training_net_with_autodiff(self):
        """SpatialBN -> Relu-free chain -> Dropout -> SoftmaxWithLoss, gradients by
        AddGradientOperators, with the running statistics updated in place across iterations."""
        rng = np.random.RandomState(0)
        X = rng.randn(4, 3, 2, 2).astype(np.float32)
        for name, value in dict(
            X=X,
            s=np.ones(3, np.float32),
            b=np.zeros(3, np.float32),
            rm=np.zeros(3, np.float32),
            rv=np.ones(3, np.float32),
            label=np.array([0, 1, 2, 3], np.int32),
        ).items():
            workspace.FeedBlob(name, value)
        net = core.Net("bn_train")
        net.SpatialBN(["X", "s", "b", "rm", "rv"], ["Y", "rm", "rv", "sm", "siv"], momentum=0.5)
        net.Dropout(["Y"], ["D", "mask"], ratio=0.0)
        net.SoftmaxWithLoss(["D", "label"], ["P", "loss"], axis=1)
        net.AddGradientOperators(["loss"])
        types = [op.type for op in net.Proto().op]
        self.assertIn("SpatialBNGradient", types)
        self.assertIn("DropoutGrad", types)
        workspace.RunNetOnce(net)
        workspace.RunNetOnce(net)
        mean = X.mean(axis=(0, 2, 3))
        np.testing.assert_allclose(workspace.FetchBlob("rm"), 0.75 * mean, rtol=1e-4, atol=1e-6)
        self.assertEqual(workspace.FetchBlob("X_grad").shape, X.shape)
        self.assertEqual(workspace.FetchBlob("s_grad").shape, (3,))
        # dbias = sum of the loss gradient at each channel's positions;
        # dloss/dlogits = (P - onehot) / N.
        P = workspace.FetchBlob("P").reshape(4, 12)
        dlogits = (P - np.eye(12, dtype=np.float32)[[0, 1, 2, 3]]) / 4
        np.testing.assert_allclose(
            workspace.FetchBlob("b_grad"),
            dlogits.reshape(4, 3, 4).sum(axis=(0, 2)),
            rtol=1e-4,
            atol=1e-6,
        )
