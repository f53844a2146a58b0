"""Numpy references of the recurrent cells (float64), and a finite-difference gradient of a
caffe2 net, shared by test_rnn_cell.py, test_recurrent.py and test_rnn_cell_attention.py."""
import numpy as np

from caffe2.python import workspace


def sigmoid(x):
    return 1.0 / (1.0 + np.exp(-x))


def _batch_state(state, N):
    """(1, N, D) or (N, D) or (D,) -> (N, D)."""
    state = np.asarray(state, dtype=np.float64)
    if state.ndim == 1:
        return np.tile(state, (N, 1))
    return state.reshape(N, -1)


def _valid(t, seq_lengths, N):
    if seq_lengths is None:
        return np.ones((N, 1), dtype=bool)
    return (t < np.asarray(seq_lengths)).reshape(N, 1)


def _masked(valid, new, prev, drop_states):
    return np.where(valid, new, 0.0 if drop_states else prev)


def lstm_unit(h, c, gates, valid, forget_bias=0.0, drop_states=False):
    """One LSTMUnit step: gates (N, 4H) in order i, f, o, g."""
    i, f, o, g = np.split(gates, 4, axis=1)
    c_new = sigmoid(f + forget_bias) * c + sigmoid(i) * np.tanh(g)
    h_new = sigmoid(o) * np.tanh(c_new)
    return _masked(valid, h_new, h, drop_states), _masked(valid, c_new, c, drop_states)


def fc(x, w, b):
    return x @ np.asarray(w, np.float64).T + np.asarray(b, np.float64)


def lstm(
    x,
    seq_lengths,
    h0,
    c0,
    w_i2h,
    b_i2h,
    w_hh,
    b_hh,
    forget_bias=0.0,
    drop_states=False,
    gates_fn=None,
):
    """Returns (hidden_all, hidden_last, cell_all, cell_last) as the LSTM ops give them.

    `gates_fn(x_t, h_prev)` replaces the gates computation (i2h(x_t) + W_hh h + b_hh).
    """
    x = np.asarray(x, np.float64)
    T, N = x.shape[:2]
    h, c = _batch_state(h0, N), _batch_state(c0, N)
    projected = fc(x, w_i2h, b_i2h)
    hs, cs = [], []
    for t in range(T):
        if gates_fn is None:
            gates = projected[t] + fc(h, w_hh, b_hh)
        else:
            gates = gates_fn(projected[t], h)
        h, c = lstm_unit(h, c, gates, _valid(t, seq_lengths, N), forget_bias, drop_states)
        hs.append(h)
        cs.append(c)
    return np.stack(hs), h[None], np.stack(cs), c[None]


def milstm_gates(w_prev, b_prev, alpha, beta1, beta2, b):
    """gates_fn of the multiplicative-integration LSTM."""

    def gates_fn(x_t, h):
        prev = fc(h, w_prev, b_prev)
        return (alpha * x_t + beta1) * prev + beta2 * x_t + b

    return gates_fn


def layer_norm_gates(w_hh, b_hh, scale, bias, epsilon=1e-4):
    """gates_fn of LayerNormLSTMCell (LayerNorm over the last axis, then scale and bias)."""

    def gates_fn(x_t, h):
        gates = x_t + fc(h, w_hh, b_hh)
        mean = gates.mean(axis=-1, keepdims=True)
        std = np.sqrt(((gates - mean) ** 2).mean(axis=-1, keepdims=True) + epsilon)
        return (gates - mean) / std * scale + bias

    return gates_fn


def gru(x, seq_lengths, h0, p, linear_before_reset=False, drop_states=False):
    """p: {'i2h_w', 'i2h_b', 'reset_gate_t_w', ..._b, 'update_gate_t_w', ..._b,
    'output_gate_t_w', ..._b}. Returns (hidden_all, hidden_last)."""
    x = np.asarray(x, np.float64)
    T, N = x.shape[:2]
    h = _batch_state(h0, N)
    x_r, x_u, x_o = np.split(fc(x, p["i2h_w"], p["i2h_b"]), 3, axis=2)
    hs = []
    for t in range(T):
        r = sigmoid(fc(h, p["reset_gate_t_w"], p["reset_gate_t_b"]) + x_r[t])
        if linear_before_reset:
            o = r * fc(h, p["output_gate_t_w"], p["output_gate_t_b"]) + x_o[t]
        else:
            o = fc(r * h, p["output_gate_t_w"], p["output_gate_t_b"]) + x_o[t]
        u = sigmoid(fc(h, p["update_gate_t_w"], p["update_gate_t_b"]) + x_u[t])
        h_new = h * u + np.tanh(o) * (1.0 - u)
        h = _masked(_valid(t, seq_lengths, N), h_new, h, drop_states)
        hs.append(h)
    return np.stack(hs), h[None]


def basic_rnn(x, seq_lengths, h0, w_i2h, b_i2h, w_hh, b_hh, activation="tanh", drop_states=False):
    x = np.asarray(x, np.float64)
    T, N = x.shape[:2]
    h = _batch_state(h0, N)
    projected = fc(x, w_i2h, b_i2h)
    act = np.tanh if activation == "tanh" else (lambda v: np.maximum(v, 0.0))
    hs = []
    for t in range(T):
        h_new = act(projected[t] + fc(h, w_hh, b_hh))
        h = _masked(_valid(t, seq_lengths, N), h_new, h, drop_states)
        hs.append(h)
    return np.stack(hs), h[None]


def softmax(x, axis):
    e = np.exp(x - x.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


def attention_step(kind, enc, p, scope, h, ctx_prev, encoder_lengths=None, coverage=None):
    """One attention step. enc (S, N, De), h (N, Dd), ctx_prev (N, De), coverage (N, S).
    Returns (context (N, De), weights (N, S))."""
    S = enc.shape[0]

    def w(name):
        return p[scope + "/" + name + "_w"], p[scope + "/" + name + "_b"]

    if kind == "dot":
        hd = fc(h, *w("weighted_decoder_hidden_state")) if h.shape[1] != enc.shape[2] else h
        logits = np.einsum("snd,nd->ns", enc, hd)
    else:
        total = fc(enc, *w("weighted_encoder_outputs")) + fc(h, *w("weighted_decoder_hidden_state"))
        if kind == "recurrent":
            total = total + fc(ctx_prev, *w("weighted_prev_attention_context"))
        if kind == "coverage":
            total = total + fc(enc, *w("coverage_weights")) * coverage.T[:, :, None]
        logits = fc(np.tanh(total), *w("attention_logits"))[:, :, 0].T
    if encoder_lengths is not None:
        invalid = np.arange(S)[None, :] >= np.asarray(encoder_lengths)[:, None]
        logits = np.where(invalid, -1e20, logits)
    weights = softmax(logits, axis=1)
    return np.einsum("ns,snd->nd", weights, enc), weights


def lstm_with_attention(
    kind, x, seq_lengths, h0, c0, ctx0, enc, encoder_lengths, p, scope, forget_bias=0.0
):
    """Returns (hidden_all, cell_all, context_all, coverage_all or None)."""
    x = np.asarray(x, np.float64)
    enc = np.asarray(enc, np.float64)
    T, N = x.shape[:2]
    S = enc.shape[0]
    h, c, ctx = _batch_state(h0, N), _batch_state(c0, N), _batch_state(ctx0, N)
    coverage = np.zeros((N, S)) if kind == "coverage" else None
    dec = scope + "/decoder/"
    projected = fc(x, p[dec + "i2h_w"], p[dec + "i2h_b"])
    hs, cs, ctxs, covs = [], [], [], []
    for t in range(T):
        gates = projected[t] + fc(
            np.concatenate([h, ctx], axis=1), p[dec + "gates_t_w"], p[dec + "gates_t_b"]
        )
        h, c = lstm_unit(h, c, gates, _valid(t, seq_lengths, N), forget_bias)
        ctx, weights = attention_step(kind, enc, p, scope, h, ctx, encoder_lengths, coverage)
        if coverage is not None:
            coverage = coverage + weights
            covs.append(coverage)
        hs.append(h)
        cs.append(c)
        ctxs.append(ctx)
    return np.stack(hs), np.stack(cs), np.stack(ctxs), (np.stack(covs) if covs else None)


def numeric_gradient(net, loss_fn, blob, eps=1e-3, indices=None):
    """Central differences of loss_fn() (computed from fetched blobs, in float64) w.r.t. the
    float32 blob `blob`, re-running `net` (already created) for each coordinate."""
    value = workspace.FetchBlob(blob).astype(np.float32)
    grad = np.zeros(value.shape, np.float64)
    flat = value.reshape(-1)
    for index in range(flat.size) if indices is None else indices:
        original = flat[index]
        losses = []
        for delta in (eps, -eps):
            flat[index] = original + delta
            workspace.FeedBlob(blob, value)
            workspace.RunNet(net)
            losses.append(loss_fn())
        flat[index] = original
        grad.reshape(-1)[index] = (losses[0] - losses[1]) / (2 * eps)
    workspace.FeedBlob(blob, value)
    return grad
