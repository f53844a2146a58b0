"""FC and FCTransposed (W stored (N, K) or (K, N)) with their gradients: numpy references, axis and
axis_w, finite-difference gradients, errors; device checks of FC through cuBLAS against the CPU
kernel, float16 on the GPU against numpy."""
import hypothesis.strategies as st
import numpy as np
import pytest
from hypothesis import given, settings

from caffe2.python import core, workspace
import caffe2.python.hypothesis_test_util as hu

from device_check import check_cpu_gpu, check_gradient_cpu_gpu, gpu, gpu_semantics, needs_gpu

COVERED_CUDA_OPS = ["FC", "FCGradient", "FCTransposed", "FCTransposedGradient"]

CPU = core.DeviceOption(0)


@pytest.mark.parametrize("op_type", ["FC", "FCTransposed"])
def test_an_empty_inner_dimension_gives_the_bias_and_zero_gradients(op_type):
    X = np.zeros((3, 0), np.float32)
    W = np.zeros((4, 0) if op_type == "FC" else (0, 4), np.float32)
    b = np.arange(4, dtype=np.float32)
    dY = np.ones((3, 4), np.float32)
    workspace.ResetWorkspace()
    for name, value in (("X", X), ("W", W), ("b", b), ("dY", dY)):
        workspace.FeedBlob(name, value)
    workspace.RunOperatorOnce(core.CreateOperator(op_type, ["X", "W", "b"], ["Y"]))
    np.testing.assert_array_equal(workspace.FetchBlob("Y"), np.tile(b, (3, 1)))
    grad = core.CreateOperator(op_type + "Gradient", ["X", "W", "dY"], ["dW", "db", "dX"])
    workspace.RunOperatorOnce(grad)
    assert workspace.FetchBlob("dW").shape == W.shape
    assert workspace.FetchBlob("dX").shape == X.shape
    np.testing.assert_array_equal(workspace.FetchBlob("db"), np.full(4, 3, np.float32))


class TestFC(hu.HypothesisTestCase):
    @given(m=st.integers(1, 5), k=st.integers(1, 6), n=st.integers(1, 4), seed=st.integers(0, 1000))
    @settings(deadline=None, max_examples=10)
    def test_reference_and_gradient(self, m, k, n, seed):
        rng = np.random.RandomState(seed)
        X = rng.randn(m, k).astype(np.float32)
        W = rng.randn(n, k).astype(np.float32)
        b = rng.randn(n).astype(np.float32)
        op = core.CreateOperator("FC", ["X", "W", "b"], ["Y"])
        self.assertReferenceChecks(CPU, op, [X, W, b], lambda X, W, b: [X @ W.T + b])
        for i in range(3):
            self.assertGradientChecks(CPU, op, [X, W, b], i, [0])

    def test_axis_flattens_leading_dims(self):
        X = np.random.randn(2, 3, 4).astype(np.float32)
        W = np.random.randn(5, 12).astype(np.float32)
        b = np.zeros(5, np.float32)
        op = core.CreateOperator("FC", ["X", "W", "b"], ["Y"])
        self.assertReferenceChecks(CPU, op, [X, W, b], lambda X, W, b: [X.reshape(2, 12) @ W.T + b])
        op2 = core.CreateOperator("FC", ["X", "W2", "b"], ["Y"], axis=2)
        W2 = np.random.randn(5, 4).astype(np.float32)
        self.assertReferenceChecks(CPU, op2, [X, W2, b], lambda X, W, b: [X @ W.T + b])

    def test_mismatched_shapes_name_the_op_and_dims(self):
        workspace.FeedBlob("X", np.zeros((2, 3), np.float32))
        workspace.FeedBlob("W", np.zeros((4, 5), np.float32))
        workspace.FeedBlob("b", np.zeros(4, np.float32))
        with self.assertRaisesRegex(
            RuntimeError, r"^\[FC\] X \(2, 3\) has 3 features per row but W \(4, 5\)"
        ):
            workspace.RunOperatorOnce(core.CreateOperator("FC", ["X", "W", "b"], ["Y"]))


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
        self.assertRunOpRaises(
            CPU,
            op,
            [np.zeros((2, 3), np.float32), np.zeros((4, 5), np.float32), np.zeros(5, np.float32)],
            exception=RuntimeError,
            regexp=r"^\[FCTransposed\] X \(2, 3\) has 3 features per row but W \(4, 5\) expects 4",
        )


@needs_gpu
@pytest.mark.parametrize("op_type", ["FC", "FCTransposed"])
@pytest.mark.parametrize(
    "x_shape,axis", [((5, 7), 1), ((2, 3, 4, 2), 1), ((2, 3, 4), 2), ((1, 1), 1)]
)
def test_fc_forward_and_gradient(op_type, x_shape, axis):
    rng = np.random.RandomState(3)
    x = rng.randn(*x_shape).astype(np.float32)
    k = int(np.prod(x_shape[axis:]))
    n = 6
    w = rng.randn(*((k, n) if op_type == "FCTransposed" else (n, k))).astype(np.float32)
    b = rng.randn(n).astype(np.float32)
    op = core.CreateOperator(op_type, ["x", "w", "b"], ["y"], axis=axis)
    check_cpu_gpu(op, [x, w, b], rtol=1e-4, atol=1e-5)
    check_gradient_cpu_gpu(op, [x, w, b], rtol=1e-4, atol=1e-4)


@needs_gpu
def test_large_fc_matches_cpu():
    rng = np.random.RandomState(4)
    x = rng.randn(64, 2048).astype(np.float32)
    w = (rng.randn(1000, 2048) * 0.01).astype(np.float32)
    b = rng.randn(1000).astype(np.float32)
    op = core.CreateOperator("FC", ["x", "w", "b"], ["y"])
    check_cpu_gpu(op, [x, w, b], rtol=1e-4, atol=1e-4)
    check_gradient_cpu_gpu(op, [x, w, b], rtol=1e-3, atol=1e-3)


@needs_gpu
@gpu_semantics
def test_float16_fc_and_gradient_match_numpy():
    """The CPU FC takes float only: float16 on the GPU is checked against numpy."""
    rng = np.random.RandomState(6)
    x = rng.randn(8, 16).astype(np.float16)
    w = (rng.randn(5, 16) * 0.2).astype(np.float16)
    b = rng.randn(5).astype(np.float16)
    dy = rng.randn(8, 5).astype(np.float16)
    workspace.ResetWorkspace()
    for name, value in (("x", x), ("w", w), ("b", b), ("dy", dy)):
        workspace.FeedBlob(name, value, gpu())
    workspace.RunOperatorOnce(
        core.CreateOperator("FC", ["x", "w", "b"], ["y"], device_option=gpu())
    )
    workspace.RunOperatorOnce(
        core.CreateOperator("FCGradient", ["x", "w", "dy"], ["dw", "db", "dx"], device_option=gpu())
    )
    x32, w32, dy32 = (v.astype(np.float32) for v in (x, w, dy))
    expected = {
        "y": x32 @ w32.T + b.astype(np.float32),
        "dw": dy32.T @ x32,
        "db": dy32.sum(axis=0),
        "dx": dy32 @ w32,
    }
    for name, value in expected.items():
        out = workspace.FetchBlob(name)
        assert out.dtype == np.float16, name
        np.testing.assert_allclose(
            out.astype(np.float32), value, rtol=1e-2, atol=2e-2, err_msg=name
        )
