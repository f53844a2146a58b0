"""SoftmaxWithLoss: hard labels, weights, label_prob, scale, axis, gradients and label validation;
device checks against the CPU kernel (shapes past one block per row and past the grid cap, label
layouts, inputs fed on the host) and, GPU only, bad labels on the GPU that make the loss NaN."""
import hypothesis.strategies as st
import numpy as np
import pytest
from hypothesis import given, settings

from caffe2.python import core, workspace
import caffe2.python.hypothesis_test_util as hu

from device_check import check_cpu_gpu, gpu_semantics, needs_gpu
from loss_inputs import MANY_ROWS, check_with_gradient, labels, logits, probs, rng, run_on_gpu

COVERED_CUDA_OPS = ["SoftmaxWithLoss", "SoftmaxWithLossGradient"]

CPU = core.DeviceOption(0)


def softmax(x):
    e = np.exp(x - x.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


def loss_ref(X, T, W=None, scale=1.0, label_prob=False):
    P = softmax(X.reshape(X.shape[0], -1).astype(np.float64))
    n = P.shape[0]
    w = np.ones(n) if W is None else W.astype(np.float64)
    if label_prob:
        ce = -(T.reshape(n, -1) * np.log(np.maximum(P, 1e-20))).sum(axis=1)
    else:
        ce = -np.log(np.maximum(P[np.arange(n), T.reshape(-1)], 1e-20))
    total = w.sum()
    loss = scale * (w * ce).sum() / total if total != 0 else 0.0
    return [P.reshape(X.shape).astype(np.float32), np.array(loss, np.float32)]


class TestSoftmaxWithLoss(hu.HypothesisTestCase):
    @given(
        n=st.integers(1, 5),
        d=st.integers(2, 6),
        seed=st.integers(0, 1000),
        weighted=st.booleans(),
        scale=st.sampled_from([1.0, 0.5, 2.0]),
    )
    @settings(deadline=None, max_examples=10)
    def test_hard_labels(self, n, d, seed, weighted, scale):
        rng = np.random.RandomState(seed)
        X = rng.randn(n, d).astype(np.float32)
        T = rng.randint(0, d, size=n).astype(np.int32)
        inputs = [X, T]
        names = ["X", "T"]
        if weighted:
            inputs.append(rng.rand(n).astype(np.float32) + 0.1)
            names.append("W")
        op = core.CreateOperator("SoftmaxWithLoss", names, ["P", "loss"], scale=scale)
        self.assertReferenceChecks(CPU, op, inputs, lambda *a: loss_ref(*a, scale=scale))
        self.assertGradientChecks(CPU, op, inputs, 0, [1])

    @given(
        n=st.integers(1, 4), d=st.integers(2, 5), seed=st.integers(0, 1000), weighted=st.booleans()
    )
    @settings(deadline=None, max_examples=8)
    def test_label_prob(self, n, d, seed, weighted):
        rng = np.random.RandomState(seed)
        X = rng.randn(n, d).astype(np.float32)
        T = rng.rand(n, d).astype(np.float32)
        T /= T.sum(axis=1, keepdims=True)
        inputs, names = [X, T], ["X", "T"]
        if weighted:
            inputs.append(rng.rand(n).astype(np.float32) + 0.1)
            names.append("W")
        op = core.CreateOperator("SoftmaxWithLoss", names, ["P", "loss"], label_prob=1)
        self.assertReferenceChecks(CPU, op, inputs, lambda *a: loss_ref(*a, label_prob=True))
        self.assertGradientChecks(CPU, op, inputs, 0, [1])

    def test_axis_and_2d_labels(self):
        X = np.random.randn(2, 3, 4).astype(np.float32)
        T = np.random.randint(0, 4, size=(6, 1)).astype(np.int32)
        op = core.CreateOperator("SoftmaxWithLoss", ["X", "T"], ["P", "loss"], axis=2)
        ref = loss_ref(X.reshape(6, 4), T)
        self.assertReferenceChecks(CPU, op, [X, T], lambda X, T: [ref[0].reshape(2, 3, 4), ref[1]])
        self.assertGradientChecks(CPU, op, [X, T], 0, [1])

    def test_zero_weights_give_zero_loss_and_gradient(self):
        X = np.random.randn(3, 4).astype(np.float32)
        T = np.array([0, 1, 2], np.int32)
        W = np.zeros(3, np.float32)
        op = core.CreateOperator("SoftmaxWithLoss", ["X", "T", "W"], ["P", "loss"])
        self.assertReferenceChecks(CPU, op, [X, T, W], lambda X, T, W: loss_ref(X, T, W))
        self.assertGradientChecks(CPU, op, [X, T, W], 0, [1])

    def test_gradient_op_signature(self):
        op = core.CreateOperator("SoftmaxWithLoss", ["X", "T", "W"], ["P", "loss"])
        grad_ops, _ = core.GradientRegistry.GetGradientForOp(op, [None, "loss_grad"])
        self.assertEqual(grad_ops[0].type, "SoftmaxWithLossGradient")
        self.assertEqual(list(grad_ops[0].input), ["X", "T", "W", "P", "loss_grad"])
        self.assertEqual(list(grad_ops[0].output), ["X_grad"])

    def test_label_out_of_range_names_value_and_row(self):
        op = core.CreateOperator("SoftmaxWithLoss", ["X", "T"], ["P", "loss"])
        self.assertRunOpRaises(
            CPU,
            op,
            [np.zeros((3, 4), np.float32), np.array([0, 4, 1], np.int32)],
            exception=RuntimeError,
            regexp=r"^\[SoftmaxWithLoss\] label 4 in row 1 is out of range \[0, 4\)",
        )
        self.assertRunOpRaises(
            CPU,
            op,
            [np.zeros((3, 4), np.float32), np.array([0, 1, -1], np.int32)],
            exception=RuntimeError,
            regexp=r"label -1 in row 2 is out of range",
        )

    def test_bad_inputs(self):
        op = core.CreateOperator("SoftmaxWithLoss", ["X", "T"], ["P", "loss"])
        self.assertRunOpRaises(
            CPU,
            op,
            [np.zeros((3, 4), np.float32), np.zeros(3, np.int64)],
            exception=RuntimeError,
            regexp="labels must be int32",
        )
        self.assertRunOpRaises(
            CPU,
            op,
            [np.zeros((3, 4), np.float32), np.zeros(2, np.int32)],
            exception=RuntimeError,
            regexp=r"labels \(2,\) must hold one label per row",
        )
        opw = core.CreateOperator("SoftmaxWithLoss", ["X", "T", "W"], ["P", "loss"])
        self.assertRunOpRaises(
            CPU,
            opw,
            [np.zeros((3, 4), np.float32), np.zeros(3, np.int32), np.ones(2, np.float32)],
            exception=RuntimeError,
            regexp=r"weights \(2,\) must hold one float per row",
        )
        opp = core.CreateOperator("SoftmaxWithLoss", ["X", "T"], ["P", "loss"], label_prob=1)
        T = np.full((2, 4), 0.2, np.float32)
        self.assertRunOpRaises(
            CPU,
            opp,
            [np.zeros((2, 4), np.float32), T],
            exception=RuntimeError,
            regexp=r"label_prob row 0 sums to 0.8\d* instead of 1",
        )
        opo = core.CreateOperator("SoftmaxWithLoss", ["X", "T"], ["P", "loss"], order="NHWC")
        self.assertRunOpRaises(
            CPU,
            opo,
            [np.zeros((3, 4), np.float32), np.zeros(3, np.int32)],
            exception=RuntimeError,
            regexp="only order NCHW is supported, got NHWC",
        )

    def test_loss_is_a_scalar(self):
        workspace.FeedBlob("X", np.random.randn(2, 3).astype(np.float32))
        workspace.FeedBlob("T", np.array([0, 2], np.int32))
        workspace.RunOperatorOnce(core.CreateOperator("SoftmaxWithLoss", ["X", "T"], ["P", "loss"]))
        self.assertEqual(workspace.FetchBlob("loss").shape, ())


@needs_gpu
@pytest.mark.parametrize("n,d", [(6, 7), (64, 1000), (3, 1), (MANY_ROWS, 3), (2, 4097)])
def test_softmax_with_loss_shapes(n, d):
    r = rng(0)
    op = core.CreateOperator("SoftmaxWithLoss", ["X", "T"], ["P", "loss"])
    _, loss = check_with_gradient(op, [logits(r, n, d), labels(r, n, d)])
    assert loss.shape == ()


@needs_gpu
@pytest.mark.parametrize("label_shape", ["n", "n1"])
def test_softmax_with_loss_label_layouts(label_shape):
    r = rng(1)
    t = labels(r, 8, 5, (8,) if label_shape == "n" else (8, 1))
    op = core.CreateOperator("SoftmaxWithLoss", ["X", "T"], ["P", "loss"])
    check_with_gradient(op, [logits(r, 8, 5), t])


@needs_gpu
@pytest.mark.parametrize("n,d", [(6, 7), (64, 1000)])
def test_softmax_with_loss_label_prob(n, d):
    r = rng(2)
    op = core.CreateOperator("SoftmaxWithLoss", ["X", "T"], ["P", "loss"], label_prob=1)
    check_with_gradient(op, [logits(r, n, d), probs(r, n, d)])


@needs_gpu
@pytest.mark.parametrize("label_prob", [0, 1])
def test_softmax_with_loss_weights_and_scale(label_prob):
    r = rng(3)
    t = probs(r, 9, 6) if label_prob else labels(r, 9, 6)
    w = r.uniform(0, 2, 9).astype(np.float32)
    op = core.CreateOperator(
        "SoftmaxWithLoss", ["X", "T", "W"], ["P", "loss"], scale=0.25, label_prob=label_prob
    )
    check_with_gradient(op, [logits(r, 9, 6), t, w])


@needs_gpu
def test_softmax_with_loss_weights_summing_to_zero_give_zero():
    r = rng(4)
    op = core.CreateOperator("SoftmaxWithLoss", ["X", "T", "W"], ["P", "loss"])
    inputs = [logits(r, 4, 3), labels(r, 4, 3), np.zeros(4, np.float32)]
    _, loss = check_with_gradient(op, inputs)
    assert loss == 0


@needs_gpu
@pytest.mark.parametrize("shape,axis", [((2, 3, 5), 2), ((2, 3, 5), -1), ((4, 3, 2), 1)])
def test_softmax_with_loss_axis(shape, axis):
    r = rng(5)
    n = int(np.prod(shape[: axis if axis >= 0 else axis + len(shape)]))
    d = int(np.prod(shape)) // n
    op = core.CreateOperator("SoftmaxWithLoss", ["X", "T"], ["P", "loss"], axis=axis)
    check_with_gradient(op, [logits(r, *shape), labels(r, n, d)])


@needs_gpu
def test_softmax_with_loss_clamps_the_log_as_the_cpu():
    x = np.array([[0.0, 200.0, -200.0], [1.0, 2.0, 3.0]], np.float32)  # p[0][2] underflows to 0
    op = core.CreateOperator("SoftmaxWithLoss", ["X", "T"], ["P", "loss"])
    _, loss = check_cpu_gpu(op, [x, np.array([2, 0], np.int32)], rtol=1e-6, atol=1e-6)
    assert np.isfinite(loss)


@needs_gpu
def test_softmax_with_loss_gradient_op_with_inputs_on_the_host():
    r = rng(6)
    x = logits(r, 5, 4)
    p = np.exp(x) / np.exp(x).sum(axis=1, keepdims=True)
    inputs = [
        x,
        labels(r, 5, 4),
        r.rand(5).astype(np.float32),
        p.astype(np.float32),
        np.array(1.5, np.float32),
    ]
    op = core.CreateOperator(
        "SoftmaxWithLossGradient", ["X", "T", "W", "P", "dLoss"], ["dX"], scale=2.0
    )
    check_cpu_gpu(
        op, inputs, rtol=1e-5, atol=1e-6, input_device_options={"T": CPU, "W": CPU, "dLoss": CPU}
    )


@needs_gpu
@gpu_semantics
def test_bad_labels_on_the_gpu_make_the_softmax_loss_nan():
    r = rng(20)
    x, t = logits(r, 4, 5), np.array([1, 5, 0, 2], np.int32)
    op = core.CreateOperator("SoftmaxWithLoss", ["X", "T"], ["P", "loss"])
    p, loss = run_on_gpu(op, [x, t])
    assert np.isnan(loss)
    np.testing.assert_allclose(
        p, np.exp(x) / np.exp(x).sum(axis=1, keepdims=True), rtol=1e-5, atol=1e-6
    )
    w = np.zeros(4, np.float32)  # NaN even though the weights sum to 0
    _, loss = run_on_gpu(
        core.CreateOperator("SoftmaxWithLoss", ["X", "T", "W"], ["P", "loss"]), [x, t, w]
    )
    assert np.isnan(loss)
    grad = core.CreateOperator("SoftmaxWithLossGradient", ["X", "T", "P", "dL"], ["dX"])
    (dx,) = run_on_gpu(grad, [x, t, p, np.array(1.0, np.float32)])
    assert np.isnan(dx[1]).all() and np.isfinite(np.delete(dx, 1, axis=0)).all()
    good = t.copy()
    good[1] = 0
    (expected,) = run_on_gpu(grad, [x, good, p, np.array(1.0, np.float32)])
    np.testing.assert_allclose(np.delete(dx, 1, axis=0), np.delete(expected, 1, axis=0), rtol=1e-6)


@needs_gpu
@gpu_semantics
def test_label_prob_rows_not_summing_to_one_on_the_gpu_make_the_loss_nan():
    r = rng(21)
    t = probs(r, 3, 4)
    t[2] *= 0.5
    op = core.CreateOperator("SoftmaxWithLoss", ["X", "T"], ["P", "loss"], label_prob=1)
    p, loss = run_on_gpu(op, [logits(r, 3, 4), t])
    assert np.isnan(loss)
    grad = core.CreateOperator(
        "SoftmaxWithLossGradient", ["X", "T", "P", "dL"], ["dX"], label_prob=1
    )
    (dx,) = run_on_gpu(grad, [logits(r, 3, 4), t, p, np.array(1.0, np.float32)])
    assert np.isnan(dx[2]).all() and np.isfinite(dx[:2]).all()
