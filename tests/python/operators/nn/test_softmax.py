"""Softmax and SoftmaxGradient: numpy reference, axis, gradient, in-place gradient and errors;
device checks of the cuDNN Softmax against the CPU kernel (axes, shapes, large logits, in place)."""
import hypothesis.strategies as st
import numpy as np
import pytest
from hypothesis import given, settings

from caffe2.python import core, workspace
import caffe2.python.hypothesis_test_util as hu

from device_check import check_cpu_gpu, check_gradient_cpu_gpu, needs_gpu

COVERED_CUDA_OPS = [
    "Softmax",
    "Softmax_ENGINE_CUDNN",
    "SoftmaxGradient",
    "SoftmaxGradient_ENGINE_CUDNN",
]

CPU = core.DeviceOption(0)


def softmax_ref(X, axis=1):
    axis = axis % X.ndim
    x = X.reshape(int(np.prod(X.shape[:axis])), -1).astype(np.float64)
    e = np.exp(x - x.max(axis=1, keepdims=True))
    return (e / e.sum(axis=1, keepdims=True)).reshape(X.shape).astype(np.float32)


class TestSoftmax(hu.HypothesisTestCase):
    @given(X=hu.tensor(min_dim=2, max_dim=4), axis=st.integers(0, 1))
    @settings(deadline=None, max_examples=10)
    def test_reference_and_gradient(self, X, axis):
        op = core.CreateOperator("Softmax", ["X"], ["Y"], axis=axis)
        self.assertReferenceChecks(CPU, op, [X], lambda X: [softmax_ref(X, axis)])
        self.assertGradientChecks(CPU, op, [X], 0, [0])

    def test_large_logits_are_stable(self):
        X = np.array([[1000.0, 1000.0, -1000.0], [-1e30, 0.0, 1e30]], np.float32)
        op = core.CreateOperator("Softmax", ["X"], ["Y"])
        self.assertReferenceChecks(
            CPU, op, [X], lambda X: [np.array([[0.5, 0.5, 0], [0, 0, 1]], np.float32)]
        )

    def test_gradient_in_place(self):
        Y = softmax_ref(np.random.randn(3, 5).astype(np.float32))
        dY = np.random.randn(3, 5).astype(np.float32)
        expected = Y * (dY - (dY * Y).sum(axis=1, keepdims=True))
        op = core.CreateOperator("SoftmaxGradient", ["Y", "dY"], ["dY"])
        self.assertReferenceChecks(CPU, op, [Y, dY], lambda Y, dY: [expected])

    def test_gradient_op_is_softmax_gradient_on_output(self):
        op = core.CreateOperator("Softmax", ["X"], ["Y"], axis=2)
        grad_ops, _ = core.GradientRegistry.GetGradientForOp(op, ["Y_grad"])
        self.assertEqual(grad_ops[0].type, "SoftmaxGradient")
        self.assertEqual(list(grad_ops[0].input), ["Y", "Y_grad"])
        self.assertEqual(list(grad_ops[0].output), ["X_grad"])

    def test_bad_axis(self):
        op = core.CreateOperator("Softmax", ["X"], ["Y"], axis=3)
        self.assertRunOpRaises(
            CPU,
            op,
            [np.zeros((2, 3), np.float32)],
            exception=RuntimeError,
            regexp=r"^\[Softmax\] axis 3 out of range for a 2-d input",
        )

    def test_not_in_place(self):
        with self.assertRaisesRegex(RuntimeError, "cannot run in place"):
            workspace.FeedBlob("X", np.zeros((2, 3), np.float32))
            workspace.RunOperatorOnce(core.CreateOperator("Softmax", ["X"], ["X"]))


@needs_gpu
@pytest.mark.parametrize("engine", ["", "CUDNN"])
@pytest.mark.parametrize(
    "shape,axis",
    [
        ((4, 10), 1),
        ((3, 4, 5), 1),
        ((3, 4, 5), 2),
        ((3, 4, 5), -1),
        ((2, 3, 4, 5), 0),
        ((7, 1), 1),
        ((2, 1000), 1),
    ],
)
def test_softmax_matches_cpu(engine, shape, axis):
    rng = np.random.RandomState(0)
    x = (rng.randn(*shape) * 5).astype(np.float32)
    op = core.CreateOperator("Softmax", ["X"], ["Y"], axis=axis, engine=engine)
    check_cpu_gpu(op, [x], rtol=1e-5, atol=1e-6)
    check_gradient_cpu_gpu(op, [x], rtol=1e-4, atol=1e-5)


@needs_gpu
def test_softmax_of_large_logits_is_stable():
    x = np.array([[1000.0, 1001.0, 999.0], [-1000.0, -1000.0, -1000.0]], np.float32)
    (y,) = check_cpu_gpu(core.CreateOperator("Softmax", ["X"], ["Y"]), [x], rtol=1e-6, atol=1e-7)
    assert np.isfinite(y).all()


@needs_gpu
@pytest.mark.parametrize("in_place", [False, True])
def test_softmax_gradient_op(in_place):
    rng = np.random.RandomState(1)
    x = rng.randn(5, 6).astype(np.float32)
    y = np.exp(x) / np.exp(x).sum(axis=1, keepdims=True)
    dy = rng.randn(5, 6).astype(np.float32)
    op = core.CreateOperator(
        "SoftmaxGradient", ["Y", "dY"], ["dY" if in_place else "dX"], engine="CUDNN"
    )
    check_cpu_gpu(op, [y.astype(np.float32), dy], rtol=1e-5, atol=1e-6)


@needs_gpu
def test_empty_softmax():
    check_cpu_gpu(core.CreateOperator("Softmax", ["X"], ["Y"]), [np.zeros((0, 4), np.float32)])
