"""Attention mechanisms for a decoder step (used by rnn_cell.AttentionCell).

Shapes: S encoder steps, N batch, D_e encoder output dim, D_d decoder state dim.
  encoder_outputs_transposed  [N, D_e, S]
  weighted_encoder_outputs    [S, N, D_e] (encoder outputs through an FC)
  decoder_hidden_state_t      [1, N, D_d]
Each function returns (attention_weighted_encoder_context [1, N, D_e],
attention_weights_3d [N, S, 1], blobs worth recomputing on backward[, coverage_t]).

With `encoder_lengths` ([N] int32), the logits of encoder steps s >= encoder_lengths[n] are
masked out before the softmax (SequenceMask, -inf).
"""
from caffe2.python import brew


class AttentionType:
    Regular, Recurrent, Dot, SoftCoverage = tuple(range(4))


def s(scope, name):
    # Scoped by hand: the decoder step adds these ops outside the cell's name scope.
    return "{}/{}".format(str(scope), str(name)) if scope else str(name)


def _calc_weighted_context(
    model, encoder_outputs_transposed, encoder_output_dim, attention_weights_3d, scope
):
    # [N, D_e, 1] = [N, D_e, S] x [N, S, 1]
    context = brew.batch_mat_mul(
        model,
        [encoder_outputs_transposed, attention_weights_3d],
        s(scope, "attention_weighted_encoder_context"),
    )
    # [1, N, D_e]
    context, _ = model.net.Reshape(
        context,
        [context, s(scope, "attention_weighted_encoder_context_old_shape")],
        shape=[1, -1, encoder_output_dim],
    )
    return context


def _calc_attention_weights(model, attention_logits_transposed, output_dim, scope, encoder_lengths):
    if encoder_lengths is not None:
        attention_logits_transposed = model.net.SequenceMask(
            [attention_logits_transposed, encoder_lengths],
            [s(scope, "masked_attention_logits")],
            mode="sequence",
        )
    # [N, S, 1], normalized over the encoder steps.
    return brew.softmax(
        model, attention_logits_transposed, s(scope, "attention_weights_3d"), axis=1
    )


def _calc_attention_logits_from_sum_match(
    model, decoder_hidden_encoder_outputs_sum, encoder_output_dim, scope
):
    # [S, N, D_e]
    decoder_hidden_encoder_outputs_sum = model.net.Tanh(
        decoder_hidden_encoder_outputs_sum, decoder_hidden_encoder_outputs_sum
    )
    # [S, N, 1]
    attention_logits = brew.fc(
        model,
        decoder_hidden_encoder_outputs_sum,
        s(scope, "attention_logits"),
        dim_in=encoder_output_dim,
        dim_out=1,
        axis=2,
        freeze_bias=True,
    )
    # [N, S, 1]
    return brew.transpose(
        model, attention_logits, s(scope, "attention_logits_transposed"), axes=[1, 0, 2]
    )


def _apply_fc_weight_for_sum_match(model, input, dim_in, dim_out, scope, name):
    # [1, N, dim_out] -> [N, dim_out]
    output = brew.fc(model, input, s(scope, name), dim_in=dim_in, dim_out=dim_out, axis=2)
    return model.net.Squeeze(output, output, dims=[0])


def _weigh(model, logits, encoder_outputs_transposed, encoder_output_dim, scope, encoder_lengths):
    """(context [1, N, D_e], weights [N, S, 1]) from the attention logits [N, S, 1]."""
    weights = _calc_attention_weights(model, logits, encoder_output_dim, scope, encoder_lengths)
    context = _calc_weighted_context(
        model, encoder_outputs_transposed, encoder_output_dim, weights, scope
    )
    return context, weights


def _attend(model, outputs_sum, encoder_outputs_transposed, encoder_output_dim, scope, lengths):
    """(context, weights) of an additive match: the logits v . tanh(outputs_sum) weighed."""
    logits = _calc_attention_logits_from_sum_match(model, outputs_sum, encoder_output_dim, scope)
    return _weigh(model, logits, encoder_outputs_transposed, encoder_output_dim, scope, lengths)


def apply_recurrent_attention(
    model,
    encoder_output_dim,
    encoder_outputs_transposed,
    weighted_encoder_outputs,
    decoder_hidden_state_t,
    decoder_hidden_state_dim,
    attention_weighted_encoder_context_t_prev,
    scope,
    encoder_lengths=None,
):
    """Additive attention whose match also reads the previous attention context:
    logits = v . tanh(W_e e_s + W_d h_t + W_c c_{t-1})."""
    weighted_prev_attention_context = _apply_fc_weight_for_sum_match(
        model,
        attention_weighted_encoder_context_t_prev,
        encoder_output_dim,
        encoder_output_dim,
        scope,
        "weighted_prev_attention_context",
    )
    weighted_decoder_hidden_state = _apply_fc_weight_for_sum_match(
        model,
        decoder_hidden_state_t,
        decoder_hidden_state_dim,
        encoder_output_dim,
        scope,
        "weighted_decoder_hidden_state",
    )
    # [N, D_e]
    sum_tmp = model.net.Add(
        [weighted_prev_attention_context, weighted_decoder_hidden_state],
        s(scope, "decoder_hidden_encoder_outputs_sum_tmp"),
    )
    # [S, N, D_e]
    outputs_sum = model.net.Add(
        [weighted_encoder_outputs, sum_tmp],
        s(scope, "decoder_hidden_encoder_outputs_sum"),
        broadcast=1,
    )
    context, weights = _attend(
        model, outputs_sum, encoder_outputs_transposed, encoder_output_dim, scope, encoder_lengths
    )
    return context, weights, [outputs_sum]


def apply_regular_attention(
    model,
    encoder_output_dim,
    encoder_outputs_transposed,
    weighted_encoder_outputs,
    decoder_hidden_state_t,
    decoder_hidden_state_dim,
    scope,
    encoder_lengths=None,
):
    """Additive (Bahdanau) attention: logits = v . tanh(W_e e_s + W_d h_t)."""
    weighted_decoder_hidden_state = _apply_fc_weight_for_sum_match(
        model,
        decoder_hidden_state_t,
        decoder_hidden_state_dim,
        encoder_output_dim,
        scope,
        "weighted_decoder_hidden_state",
    )
    # [S, N, D_e]
    outputs_sum = model.net.Add(
        [weighted_encoder_outputs, weighted_decoder_hidden_state],
        s(scope, "decoder_hidden_encoder_outputs_sum"),
        broadcast=1,
    )
    context, weights = _attend(
        model, outputs_sum, encoder_outputs_transposed, encoder_output_dim, scope, encoder_lengths
    )
    return context, weights, [outputs_sum]


def apply_dot_attention(
    model,
    encoder_output_dim,
    encoder_outputs_transposed,
    decoder_hidden_state_t,
    decoder_hidden_state_dim,
    scope,
    encoder_lengths=None,
):
    """Dot-product attention: logits = e_s . (W h_t), W only when the dims differ."""
    if decoder_hidden_state_dim != encoder_output_dim:
        weighted_decoder_hidden_state = brew.fc(
            model,
            decoder_hidden_state_t,
            s(scope, "weighted_decoder_hidden_state"),
            dim_in=decoder_hidden_state_dim,
            dim_out=encoder_output_dim,
            axis=2,
        )
    else:
        weighted_decoder_hidden_state = decoder_hidden_state_t
    # [N, D_e]
    squeezed = model.net.Squeeze(
        weighted_decoder_hidden_state,
        s(scope, "squeezed_weighted_decoder_hidden_state"),
        dims=[0],
    )
    # [N, D_e, 1]
    expanded = model.net.ExpandDims(
        squeezed, s(scope, "expanddims_squeezed_weighted_decoder_hidden_state"), dims=[2]
    )
    # [N, S, 1] = [N, D_e, S]^T x [N, D_e, 1]
    logits = model.net.BatchMatMul(
        [encoder_outputs_transposed, expanded], s(scope, "attention_logits"), trans_a=1
    )
    context, weights = _weigh(
        model, logits, encoder_outputs_transposed, encoder_output_dim, scope, encoder_lengths
    )
    return context, weights, []


def apply_soft_coverage_attention(
    model,
    encoder_output_dim,
    encoder_outputs_transposed,
    weighted_encoder_outputs,
    decoder_hidden_state_t,
    decoder_hidden_state_dim,
    scope,
    encoder_lengths,
    coverage_t_prev,
    coverage_weights,
):
    """Additive attention with a coverage term: the match adds coverage_weights [S, N, D_e]
    scaled by the attention accumulated so far, coverage_t_prev [1, N, S]. Also returns
    coverage_t = coverage_t_prev + this step's weights."""
    weighted_decoder_hidden_state = _apply_fc_weight_for_sum_match(
        model,
        decoder_hidden_state_t,
        decoder_hidden_state_dim,
        encoder_output_dim,
        scope,
        "weighted_decoder_hidden_state",
    )
    # [S, N, D_e]
    outputs_sum = model.net.Add(
        [weighted_encoder_outputs, weighted_decoder_hidden_state],
        s(scope, "decoder_hidden_encoder_outputs_sum"),
        broadcast=1,
    )
    # [N, S] -> [S, N]
    coverage_t_prev_2d = model.net.Squeeze(
        coverage_t_prev, s(scope, "coverage_t_prev_2d"), dims=[0]
    )
    coverage_t_prev_transposed = brew.transpose(
        model, coverage_t_prev_2d, s(scope, "coverage_t_prev_transposed")
    )
    # [S, N, D_e]
    scaled_coverage_weights = model.net.Mul(
        [coverage_weights, coverage_t_prev_transposed],
        s(scope, "scaled_coverage_weights"),
        broadcast=1,
        axis=0,
    )
    outputs_sum = model.net.Add([outputs_sum, scaled_coverage_weights], outputs_sum)
    context, weights = _attend(
        model, outputs_sum, encoder_outputs_transposed, encoder_output_dim, scope, encoder_lengths
    )
    # [N, S]
    weights_2d = model.net.Squeeze(weights, s(scope, "attention_weights_2d"), dims=[2])
    coverage_t = model.net.Add([coverage_t_prev, weights_2d], s(scope, "coverage_t"), broadcast=1)
    return context, weights, [outputs_sum], coverage_t
