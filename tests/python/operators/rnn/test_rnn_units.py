"""LSTMUnit and GRUUnit: numpy references with and without seq_lengths (ended rows keep or drop
their states), forget_bias, gradients by finite differences for every float input, the gradient
ops' inputs, the errors, and device checks (CUDA runs the CPU kernels)."""
import numpy as np
import pytest
from hypothesis import given, settings
import hypothesis.strategies as st

from caffe2.python import core, workspace
import caffe2.python.hypothesis_test_util as hu

from device_check import check_cpu_gpu, check_gradient_cpu_gpu, needs_gpu

COVERED_CUDA_OPS = ["LSTMUnit", "LSTMUnitGradient", "GRUUnit", "GRUUnitGradient"]

CPU = core.DeviceOption(0)


def sigmoid(x):
    return 1 / (1 + np.exp(-x))


def lstm_ref(h_prev, c_prev, gates, lengths, t, forget_bias=0.0, drop_states=False):
    D = h_prev.shape[-1]
    i, f, o, g = (gates[..., k * D : (k + 1) * D] for k in range(4))
    c = sigmoid(f + forget_bias) * c_prev + sigmoid(i) * np.tanh(g)
    h = sigmoid(o) * np.tanh(c)
    valid = (t[0] < lengths)[None, :, None]
    keep_h = np.zeros_like(h_prev) if drop_states else h_prev
    keep_c = np.zeros_like(c_prev) if drop_states else c_prev
    return [
        np.where(valid, h, keep_h).astype(np.float32),
        np.where(valid, c, keep_c).astype(np.float32),
    ]


def gru_ref(h_prev, gates, lengths, t, drop_states=False):
    D = h_prev.shape[-1]
    u = sigmoid(gates[..., D : 2 * D])
    h = h_prev * u + np.tanh(gates[..., 2 * D :]) * (1 - u)
    valid = (t[0] < lengths)[None, :, None]
    keep = np.zeros_like(h_prev) if drop_states else h_prev
    return [np.where(valid, h, keep).astype(np.float32)]


def unit_inputs(n, d, k, seed, t):
    rng = np.random.RandomState(seed)
    h = rng.randn(1, n, d).astype(np.float32)
    c = rng.randn(1, n, d).astype(np.float32)
    gates = rng.randn(1, n, k * d).astype(np.float32)
    lengths = rng.randint(0, 4, n).astype(np.int32)
    return h, c, gates, lengths, np.array([t], np.int32)


class TestRnnUnits(hu.HypothesisTestCase):
    @given(
        n=st.integers(1, 4),
        d=st.integers(1, 3),
        t=st.integers(0, 3),
        forget_bias=st.sampled_from([0.0, 1.0]),
        drop_states=st.booleans(),
        seed=st.integers(0, 50),
    )
    @settings(deadline=None, max_examples=15)
    def test_lstm_unit(self, n, d, t, forget_bias, drop_states, seed):
        h, c, gates, lengths, ts = unit_inputs(n, d, 4, seed, t)
        op = core.CreateOperator(
            "LSTMUnit",
            ["h", "c", "gates", "lengths", "t"],
            ["h_t", "c_t"],
            forget_bias=forget_bias,
            drop_states=drop_states,
        )
        ref = lambda *a: lstm_ref(*a, forget_bias=forget_bias, drop_states=drop_states)  # noqa
        self.assertReferenceChecks(CPU, op, [h, c, gates, lengths, ts], ref)
        for i in (0, 1, 2):
            self.assertGradientChecks(CPU, op, [h, c, gates, lengths, ts], i, [0, 1])

    @given(n=st.integers(1, 4), d=st.integers(1, 3), t=st.integers(0, 3), seed=st.integers(0, 50))
    @settings(deadline=None, max_examples=10)
    def test_lstm_unit_without_seq_lengths(self, n, d, t, seed):
        h, c, gates, _, ts = unit_inputs(n, d, 4, seed, t)
        op = core.CreateOperator(
            "LSTMUnit", ["h", "c", "gates", "t"], ["h_t", "c_t"], sequence_lengths=False
        )
        everything = np.full(n, 100, np.int32)
        self.assertReferenceChecks(
            CPU, op, [h, c, gates, ts], lambda h, c, g, t: lstm_ref(h, c, g, everything, t)
        )
        self.assertGradientChecks(CPU, op, [h, c, gates, ts], 2, [0, 1])

    @given(
        n=st.integers(1, 4),
        d=st.integers(1, 3),
        t=st.integers(0, 3),
        drop_states=st.booleans(),
        seed=st.integers(0, 50),
    )
    @settings(deadline=None, max_examples=15)
    def test_gru_unit(self, n, d, t, drop_states, seed):
        h, _, gates, lengths, ts = unit_inputs(n, d, 3, seed, t)
        op = core.CreateOperator(
            "GRUUnit", ["h", "gates", "lengths", "t"], ["h_t"], drop_states=drop_states
        )
        ref = lambda *a: gru_ref(*a, drop_states=drop_states)  # noqa: E731
        self.assertReferenceChecks(CPU, op, [h, gates, lengths, ts], ref)
        for i in (0, 1):
            self.assertGradientChecks(CPU, op, [h, gates, lengths, ts], i, [0])

    def test_gradient_ops_take_upstreams_inputs(self):
        op = core.CreateOperator("LSTMUnit", ["h", "c", "g", "l", "t"], ["h_t", "c_t"])
        grad_ops, _ = core.GradientRegistry.GetGradientForOp(op, ["h_t_grad", "c_t_grad"])
        assert list(grad_ops[0].input) == [
            "h",
            "c",
            "g",
            "l",
            "t",
            "h_t",
            "c_t",
            "h_t_grad",
            "c_t_grad",
        ]
        assert list(grad_ops[0].output) == ["h_grad", "c_grad", "g_grad"]
        op = core.CreateOperator("GRUUnit", ["h", "g", "l", "t"], ["h_t"])
        grad_ops, _ = core.GradientRegistry.GetGradientForOp(op, ["h_t_grad"])
        assert list(grad_ops[0].input) == ["h", "g", "l", "t", "h_t", "h_t_grad"]
        assert list(grad_ops[0].output) == ["h_grad", "g_grad"]


@pytest.mark.parametrize(
    "gates,lengths,message",
    [
        (
            np.zeros((1, 2, 7), np.float32),
            np.zeros(2, np.int32),
            r"gates must be a float \(1, N, 4",
        ),
        (
            np.zeros((1, 3, 8), np.float32),
            np.zeros(3, np.int32),
            r"hidden_t_prev must be a float \(1, 3, 2\) tensor",
        ),
        (
            np.zeros((1, 2, 8), np.float32),
            np.zeros(3, np.int32),
            "seq_lengths must hold 2 int32 values",
        ),
    ],
)
def test_lstm_unit_bad_inputs(gates, lengths, message):
    workspace.ResetWorkspace()
    for name, value in (
        ("h", np.zeros((1, 2, 2), np.float32)),
        ("c", np.zeros((1, 2, 2), np.float32)),
        ("g", gates),
        ("l", lengths),
        ("t", np.zeros(1, np.int32)),
    ):
        workspace.FeedBlob(name, value)
    with pytest.raises(RuntimeError, match=message):
        workspace.RunOperatorOnce(
            core.CreateOperator("LSTMUnit", ["h", "c", "g", "l", "t"], ["h_t", "c_t"])
        )


@needs_gpu
def test_device_check():
    h, c, gates, lengths, ts = unit_inputs(3, 2, 4, 0, 1)
    op = core.CreateOperator("LSTMUnit", ["h", "c", "g", "l", "t"], ["h_t", "c_t"])
    check_cpu_gpu(op, [h, c, gates, lengths, ts])
    check_gradient_cpu_gpu(op, [h, c, gates, lengths, ts])
    op = core.CreateOperator("GRUUnit", ["h", "g", "l", "t"], ["h_t"])
    check_cpu_gpu(op, [h, gates[..., :6], lengths, ts])
    check_gradient_cpu_gpu(op, [h, gates[..., :6], lengths, ts])
