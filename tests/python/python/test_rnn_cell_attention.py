"""rnn_cell.LSTMWithAttention and the attention mechanisms (caffe2.python.attention) against a
numpy decoder (rnn_reference.py): every attention type with encoder-length masking, the
output sequence of the cell, and the gradients of the regular attention decoder against finite
differences."""
import numpy as np
import pytest

from caffe2.python import attention, core, model_helper, rnn_cell, workspace

import rnn_reference as ref

T, N, S = 3, 2, 4
D_IN, D_DEC, D_ENC = 3, 4, 5
ENCODER_LENGTHS = np.array([S, 2], np.int32)
SEQ_LENGTHS = np.array([T, 2], np.int32)
KINDS = {
    "regular": attention.AttentionType.Regular,
    "recurrent": attention.AttentionType.Recurrent,
    "dot": attention.AttentionType.Dot,
    "coverage": attention.AttentionType.SoftCoverage,
}


@pytest.fixture(autouse=True)
def clean_workspace():
    workspace.ResetWorkspace()
    yield
    workspace.ResetWorkspace()


def build(kind, decoder_state_dim=D_DEC, encoder_lengths=True):
    model = model_helper.ModelHelper(name="attention_test")
    names = ["x", "seq_lengths", "h0", "c0", "ctx0", "encoder_outputs", "encoder_lengths"]
    x, seq_lengths, h0, c0, ctx0, enc, enc_lengths = model.net.AddExternalInputs(*names)
    outputs = rnn_cell.LSTMWithAttention(
        model,
        decoder_inputs=x,
        decoder_input_lengths=seq_lengths,
        initial_decoder_hidden_state=h0,
        initial_decoder_cell_state=c0,
        initial_attention_weighted_encoder_context=ctx0,
        encoder_output_dim=D_ENC,
        encoder_outputs=enc,
        encoder_lengths=enc_lengths if encoder_lengths else None,
        decoder_input_dim=D_IN,
        decoder_state_dim=decoder_state_dim,
        scope="att",
        attention_type=KINDS[kind],
        forget_bias=0.5,
    )
    return model, outputs


def feed_and_init(model, decoder_state_dim=D_DEC, seed=0):
    rng = np.random.RandomState(seed)
    values = {
        "x": rng.randn(T, N, D_IN),
        "h0": 0.5 * rng.randn(1, N, decoder_state_dim),
        "c0": 0.5 * rng.randn(1, N, decoder_state_dim),
        "ctx0": 0.5 * rng.randn(1, N, D_ENC),
        "encoder_outputs": rng.randn(S, N, D_ENC),
    }
    for name, value in values.items():
        workspace.FeedBlob(name, value.astype(np.float32))
    workspace.FeedBlob("seq_lengths", SEQ_LENGTHS)
    workspace.FeedBlob("encoder_lengths", ENCODER_LENGTHS)
    workspace.RunNetOnce(model.param_init_net)
    for param in model.params:
        value = workspace.FetchBlob(param)
        if value.dtype == np.float32 and "initial_coverage" not in str(param):
            workspace.FeedBlob(str(param), (0.5 * rng.randn(*value.shape)).astype(np.float32))


def params_of(model):
    # The parameters, and the computed one (the attention logits' frozen bias).
    names = [str(p) for p in model.params] + [str(p) for p in model.GetComputedParams()]
    return {name: workspace.FetchBlob(name).astype(np.float64) for name in names}


def reference(kind, model, encoder_lengths=ENCODER_LENGTHS):
    v = {n: workspace.FetchBlob(n) for n in ["x", "h0", "c0", "ctx0", "encoder_outputs"]}
    return ref.lstm_with_attention(
        kind,
        v["x"],
        SEQ_LENGTHS,
        v["h0"],
        v["c0"],
        v["ctx0"],
        v["encoder_outputs"],
        encoder_lengths,
        params_of(model),
        "att",
        forget_bias=0.5,
    )


@pytest.mark.parametrize("kind", sorted(KINDS))
def test_decoder_with_attention_matches_numpy(kind):
    model, outputs = build(kind)
    feed_and_init(model)
    workspace.RunNetOnce(model.net)
    expected_count = 8 if kind == "coverage" else 6
    assert len(outputs) == expected_count
    got = [workspace.FetchBlob(o).astype(np.float64) for o in outputs]
    hidden_all, cell_all, context_all, coverage_all = reference(kind, model)
    assert got[0].shape == (T, N, D_DEC) and got[4].shape == (T, N, D_ENC)
    np.testing.assert_allclose(got[0], hidden_all, rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(got[1][0], hidden_all[-1], rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(got[2], cell_all, rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(got[4], context_all, rtol=1e-4, atol=1e-5)
    if kind == "coverage":
        assert got[6].shape == (T, N, S)
        np.testing.assert_allclose(got[6], coverage_all, rtol=1e-4, atol=1e-5)
        # The accumulated weights of a masked sequence stay on its first 2 encoder steps.
        np.testing.assert_allclose(got[6][:, 1, 2:], 0.0, atol=1e-6)


def test_masking_changes_the_context_of_short_sequences_only():
    model, outputs = build("regular", encoder_lengths=False)
    feed_and_init(model)
    workspace.RunNetOnce(model.net)
    unmasked = workspace.FetchBlob(outputs[4]).astype(np.float64)
    np.testing.assert_allclose(
        unmasked, reference("regular", model, encoder_lengths=None)[2], rtol=1e-4, atol=1e-5
    )
    workspace.ResetWorkspace()
    model, outputs = build("regular")
    feed_and_init(model)
    workspace.RunNetOnce(model.net)
    masked = workspace.FetchBlob(outputs[4]).astype(np.float64)
    np.testing.assert_allclose(masked[:, 0], unmasked[:, 0], rtol=1e-5, atol=1e-6)
    assert np.abs(masked[:, 1] - unmasked[:, 1]).max() > 1e-2


def test_dot_attention_with_equal_dims_has_no_projection():
    model, outputs = build("dot", decoder_state_dim=D_ENC)
    assert not any("weighted_decoder_hidden_state" in str(p) for p in model.params)
    feed_and_init(model, decoder_state_dim=D_ENC)
    workspace.RunNetOnce(model.net)
    got = workspace.FetchBlob(outputs[4]).astype(np.float64)
    np.testing.assert_allclose(got, reference("dot", model)[2], rtol=1e-4, atol=1e-5)


def test_cell_output_sequence_concatenates_hidden_and_context():
    model = model_helper.ModelHelper(name="attention_cell")
    x, seq_lengths, enc, enc_lengths = model.net.AddExternalInputs(
        "x", "seq_lengths", "encoder_outputs", "encoder_lengths"
    )
    cell = rnn_cell.MILSTMWithAttentionCell(
        encoder_output_dim=D_ENC,
        encoder_outputs=enc,
        encoder_lengths=enc_lengths,
        decoder_input_dim=D_IN,
        decoder_state_dim=D_DEC,
        name="att",
        attention_type=attention.AttentionType.Regular,
        weighted_encoder_outputs=None,
        forget_bias=0.0,
        lstm_memory_optimization=False,
        attention_memory_optimization=True,
    )
    assert cell.get_state_names() == [
        "att/hidden_t_external",
        "att/decoder/cell_t",
        "att/attention_weighted_encoder_context_t",
    ]
    assert cell.get_output_dim() == D_DEC + D_ENC
    output, states = cell.apply_over_sequence(
        model, x, seq_lengths, initial_states=["h0", "c0", "ctx0"]
    )
    # The sums of the attention are recomputed on backward rather than kept per step.
    assert [str(b) for b in cell.recompute_blobs] == ["att/decoder_hidden_encoder_outputs_sum"]
    feed_and_init(model)
    workspace.RunNetOnce(model.net)
    out = workspace.FetchBlob(output)
    assert out.shape == (T, N, D_DEC + D_ENC)
    np.testing.assert_array_equal(out[:, :, :D_DEC], workspace.FetchBlob(states[0]))
    np.testing.assert_array_equal(out[:, :, D_DEC:], workspace.FetchBlob(states[4]))
    # A blob of the step net: a beam-search step applying the cell reads it.
    assert str(cell.get_attention_weights()) == "att/attention_weights_3d"


def test_regular_attention_gradients_match_finite_differences():
    model, outputs = build("regular")
    forward = core.Net(model.net.Proto())
    rng = np.random.RandomState(9)
    w_hidden = rng.randn(T, N, D_DEC).astype(np.float32)
    w_context = rng.randn(T, N, D_ENC).astype(np.float32)
    workspace.FeedBlob("w_hidden", w_hidden)
    workspace.FeedBlob("w_context", w_context)
    parts = [
        model.net.SumElements(model.net.Mul([outputs[0], "w_hidden"])),
        model.net.SumElements(model.net.Mul([outputs[4], "w_context"])),
    ]
    loss = model.net.Sum(parts, "loss")
    grads = model.AddGradientOperators([loss])
    feed_and_init(model)
    workspace.RunNetOnce(model.net)
    checked = ["x", "encoder_outputs", "h0", "c0", "ctx0"] + [
        str(p) for p in model.params if str(p) != "att/attention_logits_b"
    ]
    analytic = {name: workspace.FetchBlob(str(grads[name])) for name in checked}
    workspace.CreateNet(forward)

    def loss_fn():
        hidden = workspace.FetchBlob(str(outputs[0])).astype(np.float64)
        context = workspace.FetchBlob(str(outputs[4])).astype(np.float64)
        return float(np.sum(hidden * w_hidden) + np.sum(context * w_context))

    for name, grad in analytic.items():
        numeric = ref.numeric_gradient(forward.Name(), loss_fn, name)
        assert np.abs(numeric).max() > 1e-2, name
        np.testing.assert_allclose(grad, numeric, rtol=2e-2, atol=3e-3, err_msg=name)


def test_attention_over_a_two_layer_decoder_trains():
    # seq2seq's decoder: an AttentionCell over a MultiRNNCell, 1-d zero initial states; the
    # attention context is an extra input of every layer.
    model = model_helper.ModelHelper(name="seq2seq_decoder")
    x, seq_lengths, enc, enc_lengths = model.net.AddExternalInputs(
        "x", "seq_lengths", "encoder_outputs", "encoder_lengths"
    )
    cells = [
        rnn_cell.LSTMCell(
            input_size=D_IN if i == 0 else D_DEC,
            hidden_size=D_DEC,
            forget_bias=0.0,
            memory_optimization=False,
        )
        for i in range(2)
    ]
    decoder = rnn_cell.MultiRNNCell(cells, name="att/decoder")
    cell = rnn_cell.AttentionCell(
        encoder_output_dim=D_ENC,
        encoder_outputs=enc,
        encoder_lengths=enc_lengths,
        decoder_cell=decoder,
        decoder_state_dim=D_DEC,
        name="att",
        attention_type=attention.AttentionType.Recurrent,
        weighted_encoder_outputs=None,
        attention_memory_optimization=True,
    )
    initial = [
        model.param_init_net.ConstantFill([], "init_" + name, shape=[dim], value=0.0)
        for name, dim in [("h0", D_DEC), ("c0", D_DEC), ("h1", D_DEC), ("c1", D_DEC)]
    ]
    initial.append(model.param_init_net.ConstantFill([], "init_ctx", shape=[D_ENC], value=0.0))
    output, states = cell.apply_over_sequence(
        model, x, seq_lengths, initial_states=initial, outputs_with_grads=[4, 8]
    )
    loss = model.net.SumElements(model.net.Mul([output, output]), "loss")
    model.AddGradientOperators([loss])
    feed_and_init(model)
    workspace.RunNetOnce(model.net)
    assert workspace.FetchBlob(output).shape == (T, N, D_DEC + D_ENC)
    for name in ["att/decoder/layer_0/gates_t_w", "att/decoder/layer_1/gates_t_w"]:
        # Each layer's recurrent projection reads [hidden, context].
        assert workspace.FetchBlob(name).shape == (4 * D_DEC, D_DEC + D_ENC)
    for param, grad in model.param_to_grad.items():
        value = workspace.FetchBlob(str(grad))
        assert np.all(np.isfinite(value)) and np.abs(value).max() > 0, param
    assert np.abs(workspace.FetchBlob("encoder_outputs_grad")).max() > 0
