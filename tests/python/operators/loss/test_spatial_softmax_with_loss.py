"""SpatialSoftmaxWithLoss: reference with ignored positions and weights, gradient, label errors;
device checks against the CPU kernel."""
import hypothesis.strategies as st
import numpy as np
import pytest
from hypothesis import given, settings

from caffe2.python import core
import caffe2.python.hypothesis_test_util as hu

from device_check import check_cpu_gpu, needs_gpu
from loss_inputs import check_with_gradient, logits, rng, spatial_labels

COVERED_CUDA_OPS = ["SpatialSoftmaxWithLoss", "SpatialSoftmaxWithLossGradient"]

CPU = core.DeviceOption(0)


def spatial_ref(X, T, W=None, scale=1.0):
    x = X.astype(np.float64)
    e = np.exp(x - x.max(axis=1, keepdims=True))
    P = e / e.sum(axis=1, keepdims=True)
    w = np.ones(T.shape) if W is None else W.astype(np.float64)
    w = np.where(T == -1, 0.0, w)
    n, _, h, wd = X.shape
    idx = np.maximum(T, 0)
    p = P[
        np.arange(n)[:, None, None], idx, np.arange(h)[None, :, None], np.arange(wd)[None, None, :]
    ]
    total = w.sum()
    loss = scale * (-(w * np.log(np.maximum(p, 1e-20))).sum()) / total if total > 0 else 0.0
    return [P.astype(np.float32), np.array(loss, np.float32)]


class TestSpatialSoftmaxWithLoss(hu.HypothesisTestCase):
    @given(
        n=st.integers(1, 3),
        d=st.integers(2, 4),
        h=st.integers(1, 3),
        w=st.integers(1, 3),
        seed=st.integers(0, 1000),
        weighted=st.booleans(),
        scale=st.sampled_from([1.0, 0.5]),
    )
    @settings(deadline=None, max_examples=10)
    def test_reference_and_gradient(self, n, d, h, w, seed, weighted, scale):
        rng = np.random.RandomState(seed)
        X = rng.randn(n, d, h, w).astype(np.float32)
        T = rng.randint(-1, d, size=(n, h, w)).astype(np.int32)
        inputs, names = [X, T], ["X", "T"]
        if weighted:
            inputs.append(rng.rand(n, h, w).astype(np.float32) + 0.1)
            names.append("W")
        op = core.CreateOperator("SpatialSoftmaxWithLoss", names, ["P", "loss"], scale=scale)
        self.assertReferenceChecks(CPU, op, inputs, lambda *a: spatial_ref(*a, scale=scale))
        self.assertGradientChecks(CPU, op, inputs, 0, [1])

    def test_all_ignored_gives_zero(self):
        X = np.random.randn(1, 3, 2, 2).astype(np.float32)
        T = np.full((1, 2, 2), -1, np.int32)
        op = core.CreateOperator("SpatialSoftmaxWithLoss", ["X", "T"], ["P", "loss"])
        self.assertReferenceChecks(CPU, op, [X, T], spatial_ref)
        self.assertGradientChecks(CPU, op, [X, T], 0, [1])

    def test_gradient_op_signature(self):
        op = core.CreateOperator("SpatialSoftmaxWithLoss", ["X", "T"], ["P", "loss"])
        grad_ops, _ = core.GradientRegistry.GetGradientForOp(op, [None, "loss_grad"])
        self.assertEqual(grad_ops[0].type, "SpatialSoftmaxWithLossGradient")
        self.assertEqual(list(grad_ops[0].input), ["X", "T", "P", "loss_grad"])

    def test_errors(self):
        op = core.CreateOperator("SpatialSoftmaxWithLoss", ["X", "T"], ["P", "loss"])
        X = np.zeros((1, 3, 2, 2), np.float32)
        T = np.zeros((1, 2, 2), np.int32)
        T[0, 1, 0] = 3
        self.assertRunOpRaises(
            CPU,
            op,
            [X, T],
            exception=RuntimeError,
            regexp=r"^\[SpatialSoftmaxWithLoss\] label 3 at position 2 is out of range \[0, 3\)",
        )
        self.assertRunOpRaises(
            CPU,
            op,
            [X, np.zeros((1, 2, 3), np.int32)],
            exception=RuntimeError,
            regexp=r"labels must be int32 \(1, 2, 2\) for logits \(1, 3, 2, 2\)",
        )
        self.assertRunOpRaises(
            CPU,
            op,
            [np.zeros((3, 2), np.float32), np.zeros(3, np.int32)],
            exception=RuntimeError,
            regexp="logits must be a 4-d",
        )


@needs_gpu
@pytest.mark.parametrize("shape", [(2, 3, 4, 4), (1, 21, 16, 16), (2, 2, 700, 800), (3, 1, 2, 3)])
def test_spatial_softmax_with_loss_ignores_minus_one(shape):
    r = rng(7)
    n, d, h, w = shape
    op = core.CreateOperator("SpatialSoftmaxWithLoss", ["X", "T"], ["P", "loss"])
    _, loss = check_with_gradient(op, [logits(r, *shape), spatial_labels(r, n, d, h, w)])
    assert loss.shape == ()


@needs_gpu
def test_spatial_softmax_with_loss_weights_and_scale():
    r = rng(8)
    w = r.uniform(0, 2, (2, 5, 6)).astype(np.float32)
    op = core.CreateOperator("SpatialSoftmaxWithLoss", ["X", "T", "W"], ["P", "loss"], scale=3.0)
    check_with_gradient(op, [logits(r, 2, 4, 5, 6), spatial_labels(r, 2, 4, 5, 6), w])


@needs_gpu
def test_spatial_softmax_with_loss_all_ignored_is_zero():
    r = rng(9)
    op = core.CreateOperator("SpatialSoftmaxWithLoss", ["X", "T"], ["P", "loss"])
    _, loss = check_with_gradient(op, [logits(r, 2, 3, 2, 2), np.full((2, 2, 2), -1, np.int32)])
    assert loss == 0


@needs_gpu
def test_spatial_softmax_with_loss_labels_on_the_host():
    r = rng(10)
    op = core.CreateOperator("SpatialSoftmaxWithLoss", ["X", "T"], ["P", "loss"])
    check_cpu_gpu(
        op, [logits(r, 2, 3, 4, 4), spatial_labels(r, 2, 3, 4, 4)], input_device_options={"T": CPU}
    )
