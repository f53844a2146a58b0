"""gru_cell: GRUCell / GRU() against a numpy GRU (rnn_reference.py), forward with sequence
masking, and gradients against finite differences of the whole net."""
import numpy as np
import pytest

from caffe2.python import core, gru_cell, model_helper, workspace

import rnn_reference as ref

T, N, D, H = 4, 3, 5, 6
SEQ_LENGTHS = np.array([4, 1, 3], np.int32)
PARAMS = ["i2h", "reset_gate_t", "update_gate_t", "output_gate_t"]


@pytest.fixture(autouse=True)
def clean_workspace():
    workspace.ResetWorkspace()
    yield
    workspace.ResetWorkspace()


def build_and_run(**kwargs):
    model = model_helper.ModelHelper(name="gru_test")
    x, seq_lengths, h0 = model.net.AddExternalInputs("x", "seq_lengths", "h0")
    outputs = gru_cell.GRU(model, x, seq_lengths, [h0], D, H, scope="gru", **kwargs)
    rng = np.random.RandomState(0)
    workspace.FeedBlob("x", rng.randn(T, N, D).astype(np.float32))
    workspace.FeedBlob("seq_lengths", SEQ_LENGTHS)
    workspace.FeedBlob("h0", (0.5 * rng.randn(1, N, H)).astype(np.float32))
    workspace.RunNetOnce(model.param_init_net)
    for param in model.params:
        shape = workspace.FetchBlob(param).shape
        workspace.FeedBlob(str(param), (0.4 * rng.randn(*shape)).astype(np.float32))
    return model, outputs


def reference(**kwargs):
    p = {}
    for name in PARAMS:
        for suffix in ("_w", "_b"):
            p[name + suffix] = workspace.FetchBlob("gru/" + name + suffix)
    x, h0 = workspace.FetchBlob("x"), workspace.FetchBlob("h0")
    return ref.gru(x, SEQ_LENGTHS, h0, p, **kwargs)


@pytest.mark.parametrize("linear_before_reset", [False, True])
@pytest.mark.parametrize("drop_states", [False, True])
def test_gru_forward_matches_numpy(linear_before_reset, drop_states):
    model, outputs = build_and_run(linear_before_reset=linear_before_reset, drop_states=drop_states)
    workspace.RunNetOnce(model.net)
    assert len(outputs) == 2
    hidden_all, hidden_last = [workspace.FetchBlob(o) for o in outputs]
    assert hidden_all.shape == (T, N, H) and hidden_last.shape == (1, N, H)
    want_all, want_last = reference(
        linear_before_reset=linear_before_reset, drop_states=drop_states
    )
    np.testing.assert_allclose(hidden_all, want_all, rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(hidden_last, want_last, rtol=1e-4, atol=1e-5)
    # Sequence 1 has length 1: later steps keep (or zero) its state.
    kept = np.zeros(H) if drop_states else hidden_all[0, 1]
    np.testing.assert_allclose(hidden_all[3, 1], kept, atol=1e-6)


def test_gru_gradients_match_finite_differences():
    model, outputs = build_and_run()
    forward = core.Net(model.net.Proto())
    weights = np.random.RandomState(5).randn(T, N, H).astype(np.float32)
    workspace.FeedBlob("loss_weights", weights)
    loss = model.net.SumElements(model.net.Mul([outputs[0], "loss_weights"]), "loss")
    model.AddGradientOperators([loss])
    workspace.RunNetOnce(model.net)
    analytic = {"x": workspace.FetchBlob("x_grad"), "h0": workspace.FetchBlob("h0_grad")}
    for param, grad in model.param_to_grad.items():
        analytic[str(param)] = workspace.FetchBlob(str(grad))
    assert len(analytic) == 2 + 2 * len(PARAMS)

    workspace.CreateNet(forward)

    def loss_fn():
        return float(np.sum(workspace.FetchBlob(str(outputs[0])).astype(np.float64) * weights))

    for name, grad in analytic.items():
        numeric = ref.numeric_gradient(forward.Name(), loss_fn, name)
        assert np.abs(numeric).max() > 1e-2, name
        np.testing.assert_allclose(grad, numeric, rtol=2e-2, atol=3e-3, err_msg=name)
