"""SigmoidCrossEntropyWithLogits and WeightedSigmoidCrossEntropyWithLogits: numpy references of the
three log-likelihoods (joined, log_D_trick, unjoined_lr_loss) and the weighted loss over 1-d to 3-d
logits, their gradients by finite differences, large logits staying finite, the errors, and device
checks (CUDA runs the CPU kernels)."""
import numpy as np
import pytest
from hypothesis import given, settings
import hypothesis.strategies as st

from caffe2.python import core, workspace
import caffe2.python.hypothesis_test_util as hu

from device_check import check_cpu_gpu, check_gradient_cpu_gpu, needs_gpu

COVERED_CUDA_OPS = [
    "SigmoidCrossEntropyWithLogits",
    "SigmoidCrossEntropyWithLogitsGradient",
    "WeightedSigmoidCrossEntropyWithLogits",
    "WeightedSigmoidCrossEntropyWithLogitsGradient",
]

CPU = core.DeviceOption(0)


def log_sigmoid(x):
    return -np.logaddexp(0, -x)


def log_likelihood(x, t, log_D_trick=False, unjoined_lr_loss=False):
    x, t = x.astype(np.float64), t.astype(np.float64)
    if log_D_trick:
        return (2 * t - 1) * log_sigmoid(x)
    if unjoined_lr_loss:
        return t * x + (1 - t) * log_sigmoid(-x)
    return t * log_sigmoid(x) + (1 - t) * log_sigmoid(-x)


def xent(x, t, w=None, **kwargs):
    ll = log_likelihood(x, t, **kwargs)
    if w is not None:
        ll = ll * w
    return (-ll.mean(axis=-1)).astype(np.float32)


def inputs(shape, seed, binary_targets=False):
    rng = np.random.RandomState(seed)
    x = rng.randn(*shape).astype(np.float32) * 2
    t = rng.rand(*shape).astype(np.float32)
    if binary_targets:
        t = (t > 0.5).astype(np.float32)
    return x, t


class TestSigmoidCrossEntropyWithLogits(hu.HypothesisTestCase):
    @given(
        shape=st.lists(st.integers(1, 4), min_size=1, max_size=3),
        seed=st.integers(0, 100),
        kind=st.sampled_from([{}, {"log_D_trick": 1}, {"unjoined_lr_loss": 1}]),
    )
    @settings(deadline=None, max_examples=12)
    def test_reference_and_gradient(self, shape, seed, kind):
        x, t = inputs(shape, seed, binary_targets=bool(kind))
        op = core.CreateOperator("SigmoidCrossEntropyWithLogits", ["X", "T"], ["Y"], **kind)
        as_bools = {k: bool(v) for k, v in kind.items()}
        self.assertReferenceChecks(CPU, op, [x, t], lambda x, t: [xent(x, t, **as_bools)])
        self.assertGradientChecks(CPU, op, [x, t], 0, [0], stepsize=1e-2, threshold=1e-2)

    @given(shape=st.lists(st.integers(1, 4), min_size=1, max_size=3), seed=st.integers(0, 100))
    @settings(deadline=None, max_examples=10)
    def test_weighted_reference_and_gradient(self, shape, seed):
        x, t = inputs(shape, seed)
        w = np.random.RandomState(seed + 1).rand(*shape).astype(np.float32)
        op = core.CreateOperator("WeightedSigmoidCrossEntropyWithLogits", ["X", "T", "W"], ["Y"])
        self.assertReferenceChecks(CPU, op, [x, t, w], lambda x, t, w: [xent(x, t, w)])
        self.assertGradientChecks(CPU, op, [x, t, w], 0, [0], stepsize=1e-2, threshold=1e-2)

    def test_gradient_ops_flow_to_the_logits_only(self):
        for op_type, ins in (
            ("SigmoidCrossEntropyWithLogits", ["X", "T"]),
            ("WeightedSigmoidCrossEntropyWithLogits", ["X", "T", "W"]),
        ):
            op = core.CreateOperator(op_type, ins, ["Y"])
            grad_ops, grads = core.GradientRegistry.GetGradientForOp(op, ["Y_grad"])
            assert [(g.type, list(g.input)) for g in grad_ops] == [
                (op_type + "Gradient", ["Y_grad"] + ins)
            ]
            assert grads[1:] == [None] * (len(ins) - 1)


def test_large_logits_stay_finite_and_exact():
    x = np.array([[-100.0, 100.0, 0.0]], dtype=np.float32)
    t = np.array([[0.0, 1.0, 1.0]], dtype=np.float32)
    workspace.ResetWorkspace()
    workspace.FeedBlob("X", x)
    workspace.FeedBlob("T", t)
    workspace.RunOperatorOnce(
        core.CreateOperator("SigmoidCrossEntropyWithLogits", ["X", "T"], ["Y"])
    )
    np.testing.assert_allclose(workspace.FetchBlob("Y"), [np.log(2) / 3], rtol=1e-6)


def test_a_0d_logit_gives_a_0d_loss():
    workspace.ResetWorkspace()
    workspace.FeedBlob("X", np.array(0.5, dtype=np.float32))
    workspace.FeedBlob("T", np.array(1.0, dtype=np.float32))
    workspace.RunOperatorOnce(
        core.CreateOperator("SigmoidCrossEntropyWithLogits", ["X", "T"], ["Y"])
    )
    y = workspace.FetchBlob("Y")
    assert y.shape == ()
    np.testing.assert_allclose(y, np.logaddexp(0, -0.5), rtol=1e-6)


@pytest.mark.parametrize(
    "feeds,kwargs,message",
    [
        (
            {"X": np.zeros((2, 3), np.float32), "T": np.zeros((2, 2), np.float32)},
            {},
            r"logits \(2, 3\) and targets \(2, 2\) must have the same shape",
        ),
        (
            {"X": np.zeros(3, np.float64), "T": np.zeros(3, np.float64)},
            {},
            "logits and targets must be float tensors",
        ),
        (
            {"X": np.zeros(3, np.float32), "T": np.zeros(3, np.float32)},
            {"log_D_trick": 1, "unjoined_lr_loss": 1},
            "log_D_trick and unjoined_lr_loss cannot both be set",
        ),
    ],
)
def test_bad_inputs_are_clear_errors(feeds, kwargs, message):
    workspace.ResetWorkspace()
    for name, value in feeds.items():
        workspace.FeedBlob(name, value)
    workspace.FeedBlob("Y", np.full(2, 7.0, np.float32))
    op = core.CreateOperator("SigmoidCrossEntropyWithLogits", ["X", "T"], ["Y"], **kwargs)
    with pytest.raises(RuntimeError, match=message):
        workspace.RunOperatorOnce(op)
    np.testing.assert_array_equal(workspace.FetchBlob("Y"), np.full(2, 7.0))  # not written


def test_weights_of_another_shape_are_refused():
    workspace.ResetWorkspace()
    workspace.FeedBlob("X", np.zeros((2, 3), np.float32))
    workspace.FeedBlob("T", np.zeros((2, 3), np.float32))
    workspace.FeedBlob("W", np.zeros((3,), np.float32))
    op = core.CreateOperator("WeightedSigmoidCrossEntropyWithLogits", ["X", "T", "W"], ["Y"])
    with pytest.raises(RuntimeError, match=r"weights must be a float tensor of the logits' shape"):
        workspace.RunOperatorOnce(op)


@needs_gpu
def test_device_check():
    x, t = inputs((3, 5), 0)
    w = np.random.RandomState(2).rand(3, 5).astype(np.float32)
    for kwargs in ({}, {"log_D_trick": 1}):
        op = core.CreateOperator("SigmoidCrossEntropyWithLogits", ["X", "T"], ["Y"], **kwargs)
        check_cpu_gpu(op, [x, t])
        check_gradient_cpu_gpu(op, [x, t])
    op = core.CreateOperator("WeightedSigmoidCrossEntropyWithLogits", ["X", "T", "W"], ["Y"])
    check_cpu_gpu(op, [x, t, w])
    check_gradient_cpu_gpu(op, [x, t, w])
