"""recurrent.recurrent_net with hand-written cells: the op's argument protocol, the forward
pass against numpy, the backward pass against finite differences (a state read twice in the
cell, a state whose gradient is another blob's), forward_only, recompute_blobs_on_backward,
and the timestep blob."""
import numpy as np
import pytest

from caffe2.python import core, recurrent, workspace

import rnn_reference as ref

T, N, D = 5, 2, 3


@pytest.fixture(autouse=True)
def clean_workspace():
    workspace.ResetWorkspace()
    yield
    workspace.ResetWorkspace()


def feed(seed=0):
    rng = np.random.RandomState(seed)
    values = {
        "x": rng.randn(T, N, D),
        "h0": 0.5 * rng.randn(1, N, D),
        "s0": rng.randn(1, N, D),
        "W": 0.5 * rng.randn(D, D),
        "b": 0.3 * rng.randn(D),
    }
    for name, value in values.items():
        workspace.FeedBlob(name, value.astype(np.float32))
    return {k: v.astype(np.float32).astype(np.float64) for k, v in values.items()}


def build(forward_only=False, recompute=False, outputs_with_grads=(0, 3)):
    """Two states: h_t = tanh(W h_{t-1} + b + x_t) and the running sum s_t = s_{t-1} + h_t
    (h_t is both a state and read inside the cell; s_{t-1}'s gradient is s_t's)."""
    cell = core.Net("cell")
    x_t, h_prev, s_prev, timestep = cell.AddExternalInputs("x_t", "h_prev", "s_prev", "t")
    pre = cell.FC([h_prev, "W", "b"], "pre", axis=2)
    total = cell.Add([pre, x_t], "total")
    h_t = cell.Tanh(total, "h_t")
    s_t = cell.Add([s_prev, h_t], "s_t")
    cell.AddExternalOutputs(h_t, s_t)

    net = core.Net("rnn")
    outputs = recurrent.recurrent_net(
        net=net,
        cell_net=cell,
        inputs=[(x_t, "x")],
        initial_cell_inputs=[(h_prev, "h0"), (s_prev, "s0")],
        links={h_prev: h_t, s_prev: s_t},
        timestep=timestep,
        scope="rnn",
        outputs_with_grads=outputs_with_grads,
        recompute_blobs_on_backward=[total] if recompute else None,
        forward_only=forward_only,
    )
    return net, outputs


def reference(v):
    h, s = v["h0"][0], v["s0"][0]
    hs, ss = [], []
    for t in range(T):
        h = np.tanh(h @ v["W"].T + v["b"] + v["x"][t])
        s = s + h
        hs.append(h)
        ss.append(s)
    return np.stack(hs), h[None], np.stack(ss), s[None]


def args_of(op):
    result = {}
    for arg in op.arg:
        if arg.HasField("n"):
            result[arg.name] = arg.n
        elif arg.HasField("s"):
            result[arg.name] = arg.s.decode()
        elif arg.HasField("i"):
            result[arg.name] = arg.i
        else:
            result[arg.name] = [s.decode() for s in arg.strings] or list(arg.ints)
    return result


def test_op_arguments_follow_the_protocol():
    net, outputs = build()
    assert [str(o) for o in outputs] == ["h_t_all", "h_t_last", "s_t_all", "s_t_last"]
    (op,) = net.Proto().op
    assert op.type == "RecurrentNetwork"
    assert list(op.input) == ["x", "h0", "s0", "W", "b"]
    assert list(op.output) == ["h_t_all", "h_t_last", "s_t_all", "s_t_last", "rnn/step_workspaces"]
    a = args_of(op)
    assert a["recurrent_states"] == ["rnn/h_prev_states", "rnn/s_prev_states"]
    assert a["initial_recurrent_state_ids"] == [1, 2]
    assert a["link_internal"] == ["h_prev", "h_t", "s_prev", "s_t", "x_t"]
    assert a["link_external"] == [
        "rnn/h_prev_states",
        "rnn/h_prev_states",
        "rnn/s_prev_states",
        "rnn/s_prev_states",
        "x",
    ]
    assert a["link_offset"] == [0, 1, 0, 1, 0]
    assert a["alias_src"] == ["rnn/h_prev_states"] * 2 + ["rnn/s_prev_states"] * 2
    assert a["alias_dst"] == ["h_t_all", "h_t_last", "s_t_all", "s_t_last"]
    assert a["alias_offset"] == [1, -1, 1, -1]
    assert a["timestep"] == "t"
    assert a["param"] == [3, 4]
    assert a["param_grads"] == ["W_grad", "b_grad"]
    assert a["outputs_with_grads"] == [0, 3]
    links = list(zip(a["backward_link_internal"], a["backward_link_external"]))
    offsets = a["backward_link_offset"]
    assert [link + (o,) for link, o in zip(links, offsets)] == [
        ("h_t_grad", "rnn/h_prev_states_grad", 1),
        ("s_t_grad", "rnn/s_prev_states_grad", 1),
        ("h_prev_grad", "rnn/h_prev_states_grad", 0),
        # s_{t-1}'s gradient is s_t's (Add passes it through): a copy, a view of its own.
        ("s_t_grad_copy", "rnn/s_prev_states_grad", 0),
        # So is x_t's: the gradient of the Add's output.
        ("total_grad", "x_grad", 0),
    ]
    backward = a["backward_step_net"]
    assert {"h_t_grad", "s_t_grad", "W", "h_prev", "h_t"} <= set(backward.external_input)
    # h_t is a state and read by the cell: its gradient sums both contributions.
    sums = [op for op in backward.op if op.type == "Sum"]
    assert [list(op.input) for op in sums] == [["h_t_grad", "s_t_grad"]]
    assert list(sums[0].output) == ["h_t_grad"]
    assert [list(op.input) + list(op.output) for op in backward.op if op.type == "Copy"] == [
        ["s_t_grad", "s_t_grad_copy"]
    ]
    assert a["step_net"].type == "simple" and a["step_net"].op[0].type == "FC"


def test_forward_matches_numpy():
    net, outputs = build()
    v = feed()
    workspace.RunNetOnce(net)
    for out, want in zip(outputs, reference(v)):
        np.testing.assert_allclose(workspace.FetchBlob(out), want, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("recompute", [False, True])
def test_gradients_match_finite_differences(recompute):
    net, outputs = build(recompute=recompute)
    if recompute:
        backward = args_of(net.Proto().op[0])["backward_step_net"]
        assert backward.op[0].type == "Add" and list(backward.op[0].output) == ["total"]
        assert "total" not in backward.external_input
    forward = core.Net(net.Proto())
    rng = np.random.RandomState(3)
    w_all = rng.randn(T, N, D).astype(np.float32)
    w_last = rng.randn(1, N, D).astype(np.float32)
    workspace.FeedBlob("w_all", w_all)
    workspace.FeedBlob("w_last", w_last)
    part_all = net.SumElements(net.Mul([outputs[0], "w_all"]))
    part_last = net.SumElements(net.Mul([outputs[3], "w_last"]))
    loss = net.Sum([part_all, part_last], "loss")
    grads = net.AddGradientOperators([loss])
    feed()
    workspace.RunNetOnce(net)
    analytic = {name: workspace.FetchBlob(str(grads[name])) for name in ["x", "h0", "s0", "W", "b"]}

    workspace.CreateNet(forward)

    def loss_fn():
        h_all = workspace.FetchBlob("h_t_all").astype(np.float64)
        s_last = workspace.FetchBlob("s_t_last").astype(np.float64)
        return float(np.sum(h_all * w_all) + np.sum(s_last * w_last))

    for name, grad in analytic.items():
        numeric = ref.numeric_gradient(forward.Name(), loss_fn, name)
        assert np.abs(numeric).max() > 1e-2, name
        np.testing.assert_allclose(grad, numeric, rtol=2e-2, atol=3e-3, err_msg=name)
    # s0 only reaches the loss through s_last, with unit weight per step.
    np.testing.assert_allclose(analytic["s0"], w_last, rtol=1e-5)


def test_forward_only_has_no_backward_arguments():
    net, outputs = build(forward_only=True)
    a = args_of(net.Proto().op[0])
    for name in ["backward_step_net", "param", "param_grads", "backward_link_internal"]:
        assert name not in a
    v = feed()
    workspace.RunNetOnce(net)
    np.testing.assert_allclose(
        workspace.FetchBlob(outputs[2]), reference(v)[2], rtol=1e-5, atol=1e-5
    )


def test_timestep_blob_counts_steps():
    cell = core.Net("count_cell")
    x_t, z_prev, timestep = cell.AddExternalInputs("x_t", "z_prev", "timestep")
    t_float = cell.Cast(timestep, "t_float", to="float")
    z_t = cell.Add([z_prev, t_float], "z_t", broadcast=1)
    cell.AddExternalOutputs(z_t)
    net = core.Net("count")
    z_all, z_last = recurrent.recurrent_net(
        net=net,
        cell_net=cell,
        inputs=[(x_t, "x")],
        initial_cell_inputs=[(z_prev, "z0")],
        links={z_prev: z_t},
        timestep=timestep,
        forward_only=True,
    )
    a = args_of(net.Proto().op[0])
    assert a["timestep"] == "timestep" and list(net.Proto().op[0].input) == ["x", "z0"]
    # Without a scope the op's internal names are scoped by a fresh op name.
    assert a["recurrent_states"][0].endswith("/z_prev_states")
    feed()
    workspace.FeedBlob("z0", np.zeros((1, N, 1), np.float32))
    workspace.RunNetOnce(net)
    want = np.cumsum(np.arange(T, dtype=np.float64))
    np.testing.assert_allclose(workspace.FetchBlob(z_all)[:, 0, 0], want)
    np.testing.assert_allclose(workspace.FetchBlob(z_last).ravel(), [want[-1]] * N)


def test_more_than_one_input_is_refused():
    cell = core.Net("bad_cell")
    with pytest.raises(AssertionError, match="Only one input"):
        recurrent.recurrent_net(core.Net("bad"), cell, [("a", "A"), ("b", "B")], [], {})


def test_set_rnn_executor_config():
    net, _ = build(forward_only=True)
    op = net.Proto().op[0]
    recurrent.set_rnn_executor_config(op, num_threads=4, max_cuda_streams=2)
    recurrent.set_rnn_executor_config(op, num_threads=3)
    a = args_of(op)
    assert a["rnn_executor.num_threads"] == 3 and a["rnn_executor.max_cuda_streams"] == 2
