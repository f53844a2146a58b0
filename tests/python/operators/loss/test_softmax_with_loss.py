"""SoftmaxWithLoss: hard labels, weights, label_prob, scale, axis, gradients and label validation."""
import hypothesis.strategies as st
import numpy as np
from hypothesis import given, settings

from caffe2.python import core, workspace
import caffe2.python.hypothesis_test_util as hu

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
    @given(n=st.integers(1, 5), d=st.integers(2, 6), seed=st.integers(0, 1000),
           weighted=st.booleans(), scale=st.sampled_from([1.0, 0.5, 2.0]))
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

    @given(n=st.integers(1, 4), d=st.integers(2, 5), seed=st.integers(0, 1000), weighted=st.booleans())
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
        self.assertRunOpRaises(CPU, op, [np.zeros((3, 4), np.float32), np.array([0, 4, 1], np.int32)],
                               exception=RuntimeError,
                               regexp=r"^\[SoftmaxWithLoss\] label 4 in row 1 is out of range \[0, 4\)")
        self.assertRunOpRaises(CPU, op, [np.zeros((3, 4), np.float32), np.array([0, 1, -1], np.int32)],
                               exception=RuntimeError, regexp=r"label -1 in row 2 is out of range")

    def test_bad_inputs(self):
        op = core.CreateOperator("SoftmaxWithLoss", ["X", "T"], ["P", "loss"])
        self.assertRunOpRaises(CPU, op, [np.zeros((3, 4), np.float32), np.zeros(3, np.int64)],
                               exception=RuntimeError, regexp="labels must be int32")
        self.assertRunOpRaises(CPU, op, [np.zeros((3, 4), np.float32), np.zeros(2, np.int32)],
                               exception=RuntimeError, regexp=r"labels \(2,\) must hold one label per row")
        opw = core.CreateOperator("SoftmaxWithLoss", ["X", "T", "W"], ["P", "loss"])
        self.assertRunOpRaises(CPU, opw, [np.zeros((3, 4), np.float32), np.zeros(3, np.int32),
                                          np.ones(2, np.float32)],
                               exception=RuntimeError, regexp=r"weights \(2,\) must hold one float per row")
        opp = core.CreateOperator("SoftmaxWithLoss", ["X", "T"], ["P", "loss"], label_prob=1)
        T = np.full((2, 4), 0.2, np.float32)
        self.assertRunOpRaises(CPU, opp, [np.zeros((2, 4), np.float32), T], exception=RuntimeError,
                               regexp=r"label_prob row 0 sums to 0.8\d* instead of 1")
        opo = core.CreateOperator("SoftmaxWithLoss", ["X", "T"], ["P", "loss"], order="NHWC")
        self.assertRunOpRaises(CPU, opo, [np.zeros((3, 4), np.float32), np.zeros(3, np.int32)],
                               exception=RuntimeError, regexp="only order NCHW is supported, got NHWC")

    def test_loss_is_a_scalar(self):
        workspace.FeedBlob("X", np.random.randn(2, 3).astype(np.float32))
        workspace.FeedBlob("T", np.array([0, 2], np.int32))
        workspace.RunOperatorOnce(core.CreateOperator("SoftmaxWithLoss", ["X", "T"], ["P", "loss"]))
        self.assertEqual(workspace.FetchBlob("loss").shape, ())
