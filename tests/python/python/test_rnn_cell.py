"""rnn_cell: the LSTM flavours, the basic RNN, stacks and the wrappers against numpy references
(rnn_reference.py), and the LSTM's gradients against finite differences of the whole net."""
import numpy as np
import pytest

from caffe2.python import core, model_helper, rnn_cell, workspace

import rnn_reference as ref

T, N, D, H = 4, 3, 5, 6
SEQ_LENGTHS = np.array([4, 2, 3], np.int32)


@pytest.fixture(autouse=True)
def clean_workspace():
    workspace.ResetWorkspace()
    yield
    workspace.ResetWorkspace()


def feed_inputs(seed=0, hidden=H, states=("h0", "c0"), seq_lengths=SEQ_LENGTHS):
    rng = np.random.RandomState(seed)
    workspace.FeedBlob("x", rng.randn(T, N, D).astype(np.float32))
    workspace.FeedBlob("seq_lengths", seq_lengths)
    for name in states:
        workspace.FeedBlob(name, (0.5 * rng.randn(1, N, hidden)).astype(np.float32))


def randomize_params(model, seed=1, scale=0.4):
    """Replaces the initial parameter values by random ones (biases included, so that every
    parameter matters)."""
    rng = np.random.RandomState(seed)
    for param in model.params:
        value = workspace.FetchBlob(param)
        workspace.FeedBlob(str(param), (scale * rng.randn(*value.shape)).astype(np.float32))


def fetch(*names):
    return [workspace.FetchBlob(str(n)).astype(np.float64) for n in names]


def build_lstm(builder=rnn_cell.LSTM, dim_out=H, **kwargs):
    model = model_helper.ModelHelper(name="lstm_test")
    x, seq_lengths, h0, c0 = model.net.AddExternalInputs("x", "seq_lengths", "h0", "c0")
    outputs = builder(model, x, seq_lengths, (h0, c0), D, dim_out, scope="lstm", **kwargs)
    return model, outputs


def run_lstm(forget_bias=0.5, drop_states=False, builder=rnn_cell.LSTM, **kwargs):
    model, outputs = build_lstm(builder, forget_bias=forget_bias, drop_states=drop_states, **kwargs)
    feed_inputs()
    workspace.RunNetOnce(model.param_init_net)
    randomize_params(model)
    workspace.RunNetOnce(model.net)
    return model, outputs


@pytest.mark.parametrize("drop_states", [False, True])
def test_lstm_forward_matches_numpy(drop_states):
    model, outputs = run_lstm(drop_states=drop_states)
    assert [str(o) for o in outputs] == [
        "lstm/hidden_state_all",
        "lstm/hidden_state_last",
        "lstm/cell_state_all",
        "lstm/cell_state_last",
    ]
    hidden_all, hidden_last, cell_all, cell_last = fetch(*outputs)
    assert hidden_all.shape == (T, N, H) and cell_all.shape == (T, N, H)
    assert hidden_last.shape == (1, N, H) and cell_last.shape == (1, N, H)

    x, h0, c0, w_i2h, b_i2h, w_hh, b_hh = fetch(
        "x", "h0", "c0", "lstm/i2h_w", "lstm/i2h_b", "lstm/gates_t_w", "lstm/gates_t_b"
    )
    expected = ref.lstm(
        x, SEQ_LENGTHS, h0, c0, w_i2h, b_i2h, w_hh, b_hh, 0.5, drop_states=drop_states
    )
    for got, want in zip((hidden_all, hidden_last, cell_all, cell_last), expected):
        np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5)
    # The masking matters: sequence 1 (length 2) is frozen (or zeroed) after step 1.
    frozen = hidden_all[3, 1] if not drop_states else np.zeros(H)
    np.testing.assert_allclose(hidden_all[2, 1], frozen, atol=1e-6)
    assert not np.allclose(hidden_all[2, 0], hidden_all[1, 0])


def test_lstm_without_seq_lengths_and_with_1d_initial_states():
    model = model_helper.ModelHelper(name="lstm_1d")
    x = model.net.AddExternalInputs("x")
    h0 = model.param_init_net.GivenTensorFill(
        [], "h0_1d", shape=[H], values=np.linspace(-1, 1, H).astype(np.float32)
    )
    c0 = model.param_init_net.ConstantFill([], "c0_1d", shape=[H], value=0.25)
    outputs = rnn_cell.LSTM(model, x, None, (h0, c0), D, H, scope="lstm")
    feed_inputs(states=())
    workspace.RunNetOnce(model.param_init_net)
    randomize_params(model)
    workspace.RunNetOnce(model.net)
    x, h0, c0, w_i2h, b_i2h, w_hh, b_hh = fetch(
        "x", "h0_1d", "c0_1d", "lstm/i2h_w", "lstm/i2h_b", "lstm/gates_t_w", "lstm/gates_t_b"
    )
    expected = ref.lstm(x, None, h0, c0, w_i2h, b_i2h, w_hh, b_hh)
    for got, want in zip(fetch(*outputs), expected):
        np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5)


def test_lstm_gradients_match_finite_differences():
    model, outputs = build_lstm(forget_bias=0.5)
    forward = core.Net(model.net.Proto())
    # A loss weighting every element of hidden_all differently (outputs_with_grads=(0,)).
    weights = np.random.RandomState(7).randn(T, N, H).astype(np.float32)
    workspace.FeedBlob("loss_weights", weights)
    weighted = model.net.Mul([outputs[0], "loss_weights"], "weighted")
    loss = model.net.SumElements(weighted, "loss")
    model.AddGradientOperators([loss])

    feed_inputs()
    workspace.RunNetOnce(model.param_init_net)
    randomize_params(model)
    workspace.RunNetOnce(model.net)
    analytic = {
        name: workspace.FetchBlob(grad).astype(np.float64)
        for name, grad in [("x", "x_grad"), ("h0", "h0_grad"), ("c0", "c0_grad")]
        + [(str(p), str(g)) for p, g in model.param_to_grad.items()]
    }
    assert sorted(analytic) == sorted(
        ["x", "h0", "c0", "lstm/i2h_w", "lstm/i2h_b", "lstm/gates_t_w", "lstm/gates_t_b"]
    )

    workspace.CreateNet(forward)

    def loss_fn():
        return float(np.sum(workspace.FetchBlob(str(outputs[0])).astype(np.float64) * weights))

    for name, grad in analytic.items():
        numeric = ref.numeric_gradient(forward.Name(), loss_fn, name)
        assert np.abs(numeric).max() > 1e-2, name
        np.testing.assert_allclose(grad, numeric, rtol=2e-2, atol=3e-3, err_msg=name)


def lstm_gradients(**kwargs):
    workspace.ResetWorkspace()
    model, outputs = build_lstm(forget_bias=0.5, **kwargs)
    loss = model.net.SumElements(model.net.Mul([outputs[0], outputs[0]]), "loss")
    grads = model.AddGradientOperators([loss])
    feed_inputs()
    workspace.RunNetOnce(model.param_init_net)
    randomize_params(model)
    workspace.RunNetOnce(model.net)
    names = ["x", "h0", "c0"] + [str(p) for p in model.params]
    return model, {name: workspace.FetchBlob(str(grads[name])) for name in names}


def test_memory_optimization_recomputes_the_gates_with_the_same_gradients():
    _, plain = lstm_gradients()
    model, optimized = lstm_gradients(memory_optimization=True)
    (op,) = [op for op in model.net.Proto().op if op.type == "RecurrentNetwork"]
    args = {a.name: a for a in op.arg}
    assert [s.decode() for s in args["recompute_blobs_on_backward"].strings] == ["lstm/gates_t"]
    backward = args["backward_step_net"].n
    assert [o.type for o in backward.op[:2]] == ["FC", "Sum"]
    assert "lstm/gates_t" not in backward.external_input
    for name, grad in plain.items():
        np.testing.assert_allclose(optimized[name], grad, rtol=1e-5, atol=1e-6, err_msg=name)


def test_milstm_forward_matches_numpy():
    model, outputs = run_lstm(builder=rnn_cell.MILSTM)
    names = ["lstm/" + n for n in ("prev_t_w", "prev_t_b", "alpha", "beta1", "beta2", "b")]
    assert set(names) <= set(str(p) for p in model.params)
    gates_fn = ref.milstm_gates(*fetch(*names))
    x, h0, c0, w_i2h, b_i2h = fetch("x", "h0", "c0", "lstm/i2h_w", "lstm/i2h_b")
    expected = ref.lstm(x, SEQ_LENGTHS, h0, c0, w_i2h, b_i2h, None, None, 0.5, gates_fn=gates_fn)
    for got, want in zip(fetch(*outputs), expected):
        np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5)


def test_layer_norm_lstm_forward_matches_numpy():
    model, outputs = run_lstm(builder=rnn_cell.LayerNormLSTM)
    w_hh, b_hh, scale, bias = fetch(
        "lstm/gates_t_w", "lstm/gates_t_b", "lstm/gates_t_norm_scale", "lstm/gates_t_norm_bias"
    )
    gates_fn = ref.layer_norm_gates(w_hh, b_hh, scale, bias)
    x, h0, c0, w_i2h, b_i2h = fetch("x", "h0", "c0", "lstm/i2h_w", "lstm/i2h_b")
    expected = ref.lstm(x, SEQ_LENGTHS, h0, c0, w_i2h, b_i2h, None, None, 0.5, gates_fn=gates_fn)
    for got, want in zip(fetch(*outputs), expected):
        np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4)


def test_two_layer_lstm_matches_stacked_numpy():
    dims = [H, 4]
    model = model_helper.ModelHelper(name="lstm_stack")
    x, seq_lengths = model.net.AddExternalInputs("x", "seq_lengths")
    states = model.net.AddExternalInputs("h0", "c0", "h1", "c1")
    outputs = rnn_cell.LSTM(
        model, x, seq_lengths, states, D, dims, scope="stack", return_last_layer_only=False
    )
    assert len(outputs) == 8
    rng = np.random.RandomState(3)
    feed_inputs(states=())
    for name, dim in zip(["h0", "c0", "h1", "c1"], [H, H, 4, 4]):
        workspace.FeedBlob(name, rng.randn(1, N, dim).astype(np.float32))
    workspace.RunNetOnce(model.param_init_net)
    randomize_params(model)
    workspace.RunNetOnce(model.net)

    layer0 = ref.lstm(
        *fetch("x"),
        SEQ_LENGTHS,
        *fetch("h0", "c0", "stack/i2h_w", "stack/i2h_b"),
        *fetch("stack/layer_0/gates_t_w", "stack/layer_0/gates_t_b"),
    )
    layer1 = ref.lstm(
        layer0[0],
        SEQ_LENGTHS,
        *fetch("h1", "c1", "stack/layer_1/i2h_w", "stack/layer_1/i2h_b"),
        *fetch("stack/layer_1/gates_t_w", "stack/layer_1/gates_t_b"),
    )
    for got, want in zip(fetch(*outputs), list(layer0) + list(layer1)):
        np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5)


def test_multi_rnn_cell_residual_output_sums_the_layers():
    model = model_helper.ModelHelper(name="residual_stack")
    x, seq_lengths = model.net.AddExternalInputs("x", "seq_lengths")
    cells = [
        rnn_cell.LSTMCell(D if i == 0 else H, H, forget_bias=0.0, memory_optimization=False)
        for i in range(2)
    ]
    cell = rnn_cell.MultiRNNCell(cells, name="res", residual_output_layers=[1])
    assert cell.output_indices == [0, 2] and cell.get_output_state_index() == 2
    assert cell.get_state_names() == [
        "res/layer_0/hidden_t",
        "res/layer_0/cell_t",
        "res/layer_1/hidden_t",
        "res/layer_1/cell_t",
    ]
    output, states = cell.apply_over_sequence(
        model, x, seq_lengths, initial_states=["h0", "c0", "h1", "c1"]
    )
    rng = np.random.RandomState(2)
    feed_inputs(states=())
    for name in ["h0", "c0", "h1", "c1"]:
        workspace.FeedBlob(name, rng.randn(1, N, H).astype(np.float32))
    workspace.RunNetOnce(model.param_init_net)
    randomize_params(model)
    workspace.RunNetOnce(model.net)
    out, hidden0, hidden1 = fetch(output, states[0], states[4])
    np.testing.assert_allclose(out, hidden0 + hidden1, rtol=1e-5, atol=1e-6)


def test_two_layer_lstm_gradients_match_finite_differences():
    # Layer 0's new hidden state is a state and the input of layer 1 within the same step:
    # its gradient sums both.
    model = model_helper.ModelHelper(name="lstm_stack_grad")
    x, seq_lengths = model.net.AddExternalInputs("x", "seq_lengths")
    states = model.net.AddExternalInputs("h0", "c0", "h1", "c1")
    outputs = rnn_cell.LSTM(model, x, seq_lengths, states, D, [4, 3], scope="stack")
    forward = core.Net(model.net.Proto())
    weights = np.random.RandomState(8).randn(T, N, 3).astype(np.float32)
    workspace.FeedBlob("loss_weights", weights)
    loss = model.net.SumElements(model.net.Mul([outputs[0], "loss_weights"]), "loss")
    grads = model.AddGradientOperators([loss])
    rng = np.random.RandomState(4)
    feed_inputs(states=())
    for name, dim in zip(["h0", "c0", "h1", "c1"], [4, 4, 3, 3]):
        workspace.FeedBlob(name, rng.randn(1, N, dim).astype(np.float32))
    workspace.RunNetOnce(model.param_init_net)
    randomize_params(model)
    workspace.RunNetOnce(model.net)
    names = ["x", "h0", "c0", "stack/i2h_w", "stack/layer_0/gates_t_w", "stack/layer_1/i2h_w"]
    analytic = {name: workspace.FetchBlob(str(grads[name])) for name in names}
    workspace.CreateNet(forward)

    def loss_fn():
        return float(np.sum(workspace.FetchBlob(str(outputs[0])).astype(np.float64) * weights))

    for name, grad in analytic.items():
        numeric = ref.numeric_gradient(forward.Name(), loss_fn, name)
        assert np.abs(numeric).max() > 1e-2, name
        np.testing.assert_allclose(grad, numeric, rtol=2e-2, atol=3e-3, err_msg=name)


def test_forward_only_builds_no_backward_and_computes_the_same():
    _, outputs = run_lstm()
    trained = fetch(*outputs)
    workspace.ResetWorkspace()
    model, outputs = run_lstm(forward_only=True)
    (op,) = [op for op in model.net.Proto().op if op.type == "RecurrentNetwork"]
    arg_names = set(a.name for a in op.arg)
    assert "step_net" in arg_names and "backward_step_net" not in arg_names
    assert "param_grads" not in arg_names
    for got, want in zip(fetch(*outputs), trained):
        np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-6)


def test_static_unroll_matches_recurrent_network():
    _, outputs = run_lstm()
    dynamic = fetch(*outputs)
    workspace.ResetWorkspace()
    model, outputs = run_lstm(static_rnn_unroll_size=T)
    assert "RecurrentNetwork" not in [op.type for op in model.net.Proto().op]
    for got, want in zip(fetch(*outputs), dynamic):
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)


def test_basic_rnn_matches_numpy():
    model = model_helper.ModelHelper(name="basic_rnn")
    x, seq_lengths, h0 = model.net.AddExternalInputs("x", "seq_lengths", "h0")
    outputs = rnn_cell.BasicRNN(model, x, seq_lengths, [h0], D, H, scope="rnn", activation="tanh")
    assert len(outputs) == 2
    feed_inputs(states=("h0",))
    workspace.RunNetOnce(model.param_init_net)
    randomize_params(model)
    workspace.RunNetOnce(model.net)
    expected = ref.basic_rnn(
        *fetch("x"),
        SEQ_LENGTHS,
        *fetch("h0", "rnn/i2h_w", "rnn/i2h_b", "rnn/gates_t_w", "rnn/gates_t_b"),
    )
    for got, want in zip(fetch(*outputs), expected):
        np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5)


def test_apply_adds_one_step_equal_to_the_first_of_the_sequence():
    _, outputs = run_lstm()
    hidden_all, _, cell_all, _ = fetch(*outputs)
    # The same cell applied once in a plain net, reusing the parameters just trained.
    params = {n: workspace.FetchBlob(n) for n in workspace.Blobs() if n.startswith("lstm/")}
    model = model_helper.ModelHelper(name="lstm_step")
    cell = rnn_cell.LSTMCell(D, H, forget_bias=0.5, memory_optimization=False, name="lstm")
    x_t = model.net.Slice("x", "x_t", starts=[0, 0, 0], ends=[1, -1, -1])
    workspace.FeedBlob("t0", np.array([0], np.int32))
    output, (hidden, cell_state) = cell.apply(model, x_t, "seq_lengths", ["h0", "c0"], "t0")
    assert str(output) == str(hidden)
    workspace.RunNetOnce(model.param_init_net)
    for name, value in params.items():
        workspace.FeedBlob(name, value)
    workspace.RunNetOnce(model.net)
    np.testing.assert_allclose(fetch(hidden)[0][0], hidden_all[0], rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(fetch(cell_state)[0][0], cell_all[0], rtol=1e-5, atol=1e-6)


def test_dropout_cell_in_test_mode_is_the_identity():
    _, outputs = run_lstm()
    plain = fetch(outputs[0])[0]
    workspace.ResetWorkspace()
    model = model_helper.ModelHelper(name="dropout_lstm")
    x, seq_lengths, h0, c0 = model.net.AddExternalInputs("x", "seq_lengths", "h0", "c0")
    inner = rnn_cell.LSTMCell(D, H, forget_bias=0.5, memory_optimization=False, name="lstm")
    cell = rnn_cell.DropoutCell(inner, dropout_ratio=0.5, name="dropout", is_test=1)
    output, _ = cell.apply_over_sequence(model, x, seq_lengths, [h0, c0])
    assert "with_dropout_mask" in str(output)
    feed_inputs()
    workspace.RunNetOnce(model.param_init_net)
    randomize_params(model)
    workspace.RunNetOnce(model.net)
    np.testing.assert_allclose(fetch(output)[0], plain, rtol=1e-6, atol=1e-6)


def test_lstm_param_helpers():
    assert rnn_cell.GetLSTMParamNames() == {
        "weights": ["input_gate_w", "forget_gate_w", "output_gate_w", "cell_w"],
        "biases": ["input_gate_b", "forget_gate_b", "output_gate_b", "cell_b"],
    }
    model, outputs = build_lstm(return_params=True)
    params = outputs[-1]
    assert params == {
        "input": {"weights": "lstm/i2h_w", "biases": "lstm/i2h_b"},
        "recurrent": {"weights": "lstm/gates_t_w", "biases": "lstm/gates_t_b"},
    }
    workspace.RunNetOnce(model.param_init_net)
    names = rnn_cell.GetLSTMParamNames()
    values = {
        "input": {n: np.full((H, D), k, np.float32) for k, n in enumerate(names["weights"])},
        "recurrent": {n: np.full((H, H), k, np.float32) for k, n in enumerate(names["weights"])},
    }
    for kind in values:
        values[kind].update({n: np.full(H, 10 + k) for k, n in enumerate(names["biases"])})
    rnn_cell.InitFromLSTMParams(params, values)
    w, b = fetch("lstm/i2h_w", "lstm/i2h_b")
    assert w.shape == (4 * H, D)
    # Gate blocks are stacked i, f, o, g along the output axis.
    np.testing.assert_array_equal(w[:, 0], np.repeat([0, 1, 2, 3], H))
    np.testing.assert_array_equal(b, np.repeat([10, 11, 12, 13], H))


def test_cudnn_lstm_is_not_available():
    with pytest.raises(NotImplementedError, match="Recurrent"):
        rnn_cell.cudnn_LSTM(None, "x", "seq_lengths", ("h0", "c0"), D, H, "lstm")
