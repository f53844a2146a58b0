"""The oneDNN blocked-layout inference ops: DnnlToBlocked and DnnlToPlain round trips (16-channel
multiples go blocked, others stay plain), DnnlBlockedConv against Conv (bias or none, relu,
summand, stride, pad, dilation, groups, a chain of two, a second run after the filter changed, an
input layout that changes between runs), and the errors. oneDNN builds only."""
import numpy as np
import pytest
from hypothesis import given, settings
import hypothesis.strategies as st

from caffe2.python import core, workspace

pytestmark = pytest.mark.skipif(
    "DnnlBlockedConv" not in workspace.C.registered_operators(), reason="a build without oneDNN"
)


def run(ops):
    for op in ops:
        workspace.RunOperatorOnce(op)


def to_blocked(name):
    return core.CreateOperator("DnnlToBlocked", [name], [name + "_b"])


def to_plain(name, out):
    return core.CreateOperator("DnnlToPlain", [name], [out])


@pytest.mark.parametrize("channels", [3, 16, 32])
def test_round_trip(channels):
    workspace.ResetWorkspace()
    X = np.random.RandomState(channels).randn(2, channels, 5, 4).astype(np.float32)
    workspace.FeedBlob("X", X)
    run([to_blocked("X"), to_plain("X_b", "Y")])
    np.testing.assert_array_equal(workspace.FetchBlob("Y"), X)


@given(
    C=st.sampled_from([3, 16]),
    M=st.sampled_from([8, 16, 32]),
    kernel=st.integers(1, 3),
    stride=st.integers(1, 2),
    pad=st.integers(0, 1),
    dilation=st.integers(1, 2),
    bias=st.booleans(),
    relu=st.booleans(),
    summand=st.booleans(),
    seed=st.integers(0, 30),
)
@settings(deadline=None, max_examples=25)
def test_blocked_conv_equals_conv(C, M, kernel, stride, pad, dilation, bias, relu, summand, seed):
    rng = np.random.RandomState(seed)
    workspace.ResetWorkspace()
    X = rng.randn(2, C, 9, 8).astype(np.float32)
    W = (rng.randn(M, C, kernel, kernel) * 0.3).astype(np.float32)
    b = rng.randn(M).astype(np.float32)
    args = dict(kernel=kernel, stride=stride, pad=pad, dilation=dilation)
    for name, value in (("X", X), ("W", W), ("b", b)):
        workspace.FeedBlob(name, value)
    conv_inputs = ["X", "W"] + (["b"] if bias else [])
    workspace.RunOperatorOnce(core.CreateOperator("Conv", conv_inputs, ["ref"], **args))
    expected = workspace.FetchBlob("ref")
    inputs = ["X_b", "W"] + (["b"] if bias else [])
    ops = [to_blocked("X")]
    if summand:
        S = rng.randn(*expected.shape).astype(np.float32)
        workspace.FeedBlob("S", S)
        expected = expected + S
        ops.append(to_blocked("S"))
        inputs.append("S_b")
    if relu:
        expected = np.maximum(expected, 0)
    ops.append(
        core.CreateOperator(
            "DnnlBlockedConv", inputs, ["Y_b"], relu=int(relu), summand=int(summand), **args
        )
    )
    ops.append(to_plain("Y_b", "Y"))
    run(ops)
    np.testing.assert_allclose(workspace.FetchBlob("Y"), expected, rtol=1e-4, atol=1e-4)


def test_grouped_chain_and_a_new_filter_on_the_second_run():
    rng = np.random.RandomState(0)
    workspace.ResetWorkspace()
    X = rng.randn(1, 32, 6, 6).astype(np.float32)
    W1 = (rng.randn(32, 16, 3, 3) * 0.2).astype(np.float32)  # 2 groups
    W2 = (rng.randn(16, 32, 1, 1) * 0.2).astype(np.float32)
    for name, value in (("X", X), ("W1", W1), ("W2", W2)):
        workspace.FeedBlob(name, value)
    ops = [
        to_blocked("X"),
        core.CreateOperator("DnnlBlockedConv", ["X_b", "W1"], ["H_b"], kernel=3, pad=1, group=2),
        core.CreateOperator("DnnlBlockedConv", ["H_b", "W2"], ["Y_b"], kernel=1, relu=1),
        to_plain("Y_b", "Y"),
    ]
    net = core.Net("chain")
    net.Proto().op.extend(ops)
    workspace.CreateNet(net)
    for scale in (1.0, -2.0):  # the second run reorders the new filter
        workspace.FeedBlob("W2", W2 * scale)
        workspace.RunNet(net)
        workspace.RunOperatorOnce(
            core.CreateOperator("Conv", ["X", "W1"], ["H"], kernel=3, pad=1, group=2)
        )
        workspace.RunOperatorOnce(core.CreateOperator("Conv", ["H", "W2"], ["R"], kernel=1))
        expected = np.maximum(workspace.FetchBlob("R"), 0)
        np.testing.assert_allclose(workspace.FetchBlob("Y"), expected, rtol=1e-4, atol=1e-4)


def test_an_input_whose_layout_changes_between_runs():
    """The same op fed a blocked (16 channels) and then a plain-layout (3 channels) input makes a
    new primitive for the second."""
    workspace.ResetWorkspace()
    rng = np.random.RandomState(1)
    for C in (16, 3):
        X = rng.randn(1, C, 5, 5).astype(np.float32)
        W = rng.randn(16, C, 3, 3).astype(np.float32)
        workspace.FeedBlob("X", X)
        workspace.FeedBlob("W", W)
        run([to_blocked("X")])
        workspace.RunOperatorOnce(core.CreateOperator("Conv", ["X", "W"], ["R"], kernel=3))
        run(
            [
                core.CreateOperator("DnnlBlockedConv", ["X_b", "W"], ["Y_b"], kernel=3),
                to_plain("Y_b", "Y"),
            ]
        )
        np.testing.assert_allclose(
            workspace.FetchBlob("Y"), workspace.FetchBlob("R"), rtol=1e-4, atol=1e-4
        )


def test_errors_name_the_problem():
    workspace.ResetWorkspace()
    workspace.FeedBlob("X", np.zeros((1, 16, 4, 4), np.float32))
    workspace.FeedBlob("W", np.zeros((16, 16, 3, 3), np.float32))
    conv = core.CreateOperator("DnnlBlockedConv", ["X", "W"], ["Y"], kernel=3)
    with pytest.raises(RuntimeError, match=r"X \('X'\) must be a oneDNN blocked tensor"):
        workspace.RunOperatorOnce(conv)
    with pytest.raises(RuntimeError, match="the blob 'X' holds no oneDNN blocked tensor"):
        workspace.RunOperatorOnce(to_plain("X", "Y"))
    workspace.FeedBlob("X3", np.zeros((4, 4), np.float32))
    with pytest.raises(RuntimeError, match=r"X must be a 4-d \(N, C, H, W\) float tensor"):
        workspace.RunOperatorOnce(to_blocked("X3"))
    run([to_blocked("X")])
    workspace.FeedBlob("S", np.zeros((1, 16, 9, 9), np.float32))
    run([to_blocked("S")])
    bad = core.CreateOperator("DnnlBlockedConv", ["X_b", "W", "S_b"], ["Y"], kernel=3, summand=1)
    with pytest.raises(RuntimeError, match=r"the summand \(1, 16, 9, 9\) must have Y's shape"):
        workspace.RunOperatorOnce(bad)
