"""RecurrentNetwork and RecurrentNetworkGradient, built by hand with upstream's argument protocol
(as caffe2.python.recurrent writes it) for the cell h_t = tanh(FC(h_{t-1}) + x_t): the forward
against numpy (all steps, the last step, a (D) initial state repeated over the batch, forward only
with one step workspace), the gradients of the sequence, the weights and the initial state against
numpy finite differences, a second run reusing the step workspaces, and the errors."""
import numpy as np
import pytest

from caffe2.python import core, workspace

T, N, D = 4, 3, 2


def cell_net():
    cell = core.Net("cell")
    fc = cell.FC(["hidden_t_prev", "W", "b"], "fc", axis=2)
    pre = cell.Add([fc, "input_t"], "pre")
    cell.Tanh(pre, "hidden_t")
    cell.Proto().external_input.extend(["hidden_t_prev", "input_t", "W", "b", "timestep"])
    cell.Proto().external_output.extend(["hidden_t"])
    return cell


def rnn_op(backward=True, init="h0"):
    cell = cell_net()
    args = dict(
        step_net=cell.Proto(),
        recurrent_states=["rnn/hidden_t_prev_states"],
        initial_recurrent_state_ids=[1],
        link_internal=["hidden_t_prev", "hidden_t", "input_t"],
        link_external=["rnn/hidden_t_prev_states", "rnn/hidden_t_prev_states", "x"],
        link_offset=[0, 1, 0],
        alias_src=["rnn/hidden_t_prev_states"] * 2,
        alias_dst=["hidden_all", "hidden_last"],
        alias_offset=[1, -1],
        timestep="timestep",
    )
    if backward:
        grad_ops, grad_map = core.GradientRegistry.GetBackwardPass(
            cell.Proto().op, {"hidden_t": "hidden_t_grad"}
        )
        back = core.Net("back")
        back.Proto().op.extend(grad_ops)
        args.update(
            backward_step_net=back.Proto(),
            param=[2, 3],
            param_grads=[str(grad_map["W"]), str(grad_map["b"])],
            backward_link_internal=[
                "hidden_t_grad",
                str(grad_map["hidden_t_prev"]),
                str(grad_map["input_t"]),
            ],
            backward_link_external=["rnn/hidden_t_prev_states_grad"] * 2 + ["x_grad"],
            backward_link_offset=[1, 0, 0],
            outputs_with_grads=[0, 1],
        )
    return core.CreateOperator(
        "RecurrentNetwork",
        ["x", init, "W", "b"],
        ["hidden_all", "hidden_last", "rnn/step_ws"],
        **args,
    )


def reference(x, h0, W, b):
    h = np.broadcast_to(h0.reshape(-1, D), (N, D)).astype(np.float64)
    hs = []
    for t in range(T):
        h = np.tanh(h @ W.T + b + x[t])
        hs.append(h)
    return np.stack(hs)


def inputs(seed=0):
    rng = np.random.RandomState(seed)
    return {
        "x": rng.randn(T, N, D).astype(np.float32),
        "h0": rng.randn(1, N, D).astype(np.float32),
        "W": (rng.randn(D, D) * 0.5).astype(np.float32),
        "b": rng.randn(D).astype(np.float32),
    }


def feed(values):
    workspace.ResetWorkspace()
    for name, value in values.items():
        workspace.FeedBlob(name, value)


@pytest.mark.parametrize("backward", [True, False])
def test_forward_matches_numpy(backward):
    values = inputs()
    feed(values)
    workspace.RunOperatorOnce(rnn_op(backward))
    expected = reference(values["x"], values["h0"], values["W"], values["b"])
    np.testing.assert_allclose(workspace.FetchBlob("hidden_all"), expected, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(workspace.FetchBlob("hidden_last"), expected[-1:], rtol=1e-5)


def test_a_1d_initial_state_is_repeated_over_the_batch():
    values = inputs()
    values["h1"] = values.pop("h0")[0, 0]
    feed(values)
    workspace.RunOperatorOnce(rnn_op(False, init="h1"))
    expected = reference(values["x"], values["h1"], values["W"], values["b"])
    np.testing.assert_allclose(workspace.FetchBlob("hidden_all"), expected, rtol=1e-5, atol=1e-6)


def loss_of(values, R_all, R_last):
    h = reference(values["x"], values["h0"], values["W"], values["b"])
    return float((h * R_all).sum() + (h[-1:] * R_last).sum())


def test_gradients_match_finite_differences():
    values = inputs(1)
    rng = np.random.RandomState(2)
    R_all = rng.randn(T, N, D).astype(np.float32)
    R_last = rng.randn(1, N, D).astype(np.float32)
    feed(values)
    workspace.FeedBlob("hidden_all_grad", R_all)
    workspace.FeedBlob("hidden_last_grad", R_last)
    op = rnn_op(True)
    grad_ops, _ = core.GradientRegistry.GetGradientForOp(
        op, ["hidden_all_grad", "hidden_last_grad", None]
    )
    assert [g.type for g in grad_ops] == ["RecurrentNetworkGradient"]
    assert list(grad_ops[0].output) == ["x_grad", "W_grad", "b_grad", "h0_grad"]
    for _ in range(2):  # the second run reuses the step workspaces and nets
        workspace.RunOperatorOnce(op)
        workspace.RunOperatorOnce(grad_ops[0])
    eps = 1e-3
    for name in ("x", "W", "b", "h0"):
        numeric = np.zeros(values[name].shape)
        for idx in np.ndindex(values[name].shape):
            plus = {k: v.astype(np.float64) for k, v in values.items()}
            minus = {k: v.astype(np.float64) for k, v in values.items()}
            plus[name][idx] += eps
            minus[name][idx] -= eps
            numeric[idx] = (loss_of(plus, R_all, R_last) - loss_of(minus, R_all, R_last)) / (
                2 * eps
            )
        np.testing.assert_allclose(
            workspace.FetchBlob(name + "_grad"), numeric, rtol=1e-2, atol=1e-3, err_msg=name
        )


def test_gradient_after_a_forward_only_run_is_refused():
    values = inputs()
    feed(values)
    workspace.FeedBlob("hidden_all_grad", np.ones((T, N, D), np.float32))
    workspace.FeedBlob("hidden_last_grad", np.ones((1, N, D), np.float32))
    workspace.RunOperatorOnce(rnn_op(False))
    grad_ops, _ = core.GradientRegistry.GetGradientForOp(
        rnn_op(True), ["hidden_all_grad", "hidden_last_grad", None]
    )
    with pytest.raises(RuntimeError, match="kept 1 step workspace\\(s\\) for 4 steps"):
        workspace.RunOperatorOnce(grad_ops[0])


@pytest.mark.parametrize(
    "change,message",
    [
        ({"link_offset": [0, 5, 0]}, r"step 0: the window \[5, 6\) of 'rnn/hidden_t_prev_states'"),
        ({"initial_recurrent_state_ids": [7]}, r"initial_recurrent_state_ids\[0\] = 7"),
        ({"link_offset": [0, 1]}, "must have one entry per link"),
        ({"alias_dst": ["hidden_all", "nowhere"]}, "alias_dst 'nowhere' is not an output"),
    ],
)
def test_bad_arguments_are_clear_errors(change, message):
    feed(inputs())
    op = rnn_op(False)
    for arg in op.arg:
        if arg.name in change:
            del arg.ints[:]
            del arg.strings[:]
            value = change[arg.name]
            if isinstance(value[0], str):
                arg.strings.extend([v.encode() for v in value])
            else:
                arg.ints.extend(value)
    with pytest.raises(RuntimeError, match=message):
        workspace.RunOperatorOnce(op)


def test_a_batch_mismatch_of_the_initial_state_is_refused():
    values = inputs()
    values["h0"] = np.zeros((1, N + 1, D), np.float32)
    feed(values)
    with pytest.raises(RuntimeError, match="must have the batch size 3 of the sequence"):
        workspace.RunOperatorOnce(rnn_op(False))


def test_blob_fetcher_copies_every_step():
    values = inputs()
    feed(values)
    workspace.RunOperatorOnce(rnn_op(True))
    fetch = core.CreateOperator(
        "RecurrentNetworkBlobFetcher", ["rnn/step_ws"], ["names"], prefix="x"
    )
    workspace.RunOperatorOnce(fetch)
    names = [n.decode() if isinstance(n, bytes) else n for n in workspace.FetchBlob("names")]
    expected = reference(values["x"], values["h0"], values["W"], values["b"])
    for t in range(T):
        assert "x_hidden_t%d" % t in names and "x_pre%d" % t in names
        np.testing.assert_allclose(
            workspace.FetchBlob("x_hidden_t%d" % t)[0], expected[t], rtol=1e-5
        )
        assert workspace.FetchBlob("x_timestep%d" % t) == [t]
    workspace.FeedBlob("not_steps", np.zeros(1, np.float32))
    bad = core.CreateOperator("RecurrentNetworkBlobFetcher", ["not_steps"], ["names"])
    with pytest.raises(RuntimeError, match="holds no step workspaces"):
        workspace.RunOperatorOnce(bad)
