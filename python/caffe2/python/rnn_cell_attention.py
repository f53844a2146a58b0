"""Decoder cells with attention over encoder outputs (caffe2.python.attention).
caffe2.python.rnn_cell re-exports everything here.

An AttentionCell wraps a decoder cell: at each step the decoder reads, besides its input,
the previous attention context (an extra input concatenated to its recurrent input); the new
decoder output then attends over the encoder outputs. The states are the decoder's (its
output state renamed `<name>/hidden_t_external`), then
`<name>/attention_weighted_encoder_context_t` [1, N, D_e] (and `<name>/coverage_t` [1, N, S]
with soft coverage). The cell's output is [decoder output, context] (dim D_d + D_e).
"""
from caffe2.proto import caffe2_pb2
from caffe2.python import brew, core, scope
from caffe2.python.attention import (
    AttentionType,
    apply_dot_attention,
    apply_recurrent_attention,
    apply_regular_attention,
    apply_soft_coverage_attention,
)
from caffe2.python.rnn_cell_base import RNNCell, _RectifyNames
from caffe2.python.rnn_cell_lstm import LSTMCell, MILSTMCell


class AttentionCell(RNNCell):
    def __init__(
        self,
        encoder_output_dim,
        encoder_outputs,
        encoder_lengths,
        decoder_cell,
        decoder_state_dim,
        attention_type,
        weighted_encoder_outputs,
        attention_memory_optimization,
        **kwargs,
    ):
        super(AttentionCell, self).__init__(**kwargs)
        self.encoder_output_dim = encoder_output_dim
        self.encoder_outputs = encoder_outputs
        self.encoder_lengths = encoder_lengths
        self.decoder_cell = decoder_cell
        self.decoder_state_dim = decoder_state_dim
        self.weighted_encoder_outputs = weighted_encoder_outputs
        self.encoder_outputs_transposed = None
        assert attention_type in [
            AttentionType.Regular,
            AttentionType.Recurrent,
            AttentionType.Dot,
            AttentionType.SoftCoverage,
        ], "Unknown attention type {}".format(attention_type)
        self.attention_type = attention_type
        self.attention_memory_optimization = attention_memory_optimization

    def _num_attention_states(self):
        return 2 if self.attention_type == AttentionType.SoftCoverage else 1

    def _apply(self, model, input_t, seq_lengths, states, timestep, extra_inputs=None):
        assert extra_inputs is None, "AttentionCell takes no extra inputs"
        input_t, seq_lengths, timestep = _RectifyNames([input_t, seq_lengths, timestep])
        states = _RectifyNames(states)
        n_attention = self._num_attention_states()
        decoder_prev_states = states[:-n_attention]
        context_t_prev = states[-n_attention]
        coverage_t_prev = states[-1] if n_attention == 2 else None

        decoder_states = self.decoder_cell._apply(
            model,
            input_t,
            seq_lengths,
            decoder_prev_states,
            timestep,
            extra_inputs=[(context_t_prev, self.encoder_output_dim)],
        )
        self.hidden_t_intermediate = self.decoder_cell._prepare_output(model, decoder_states)

        common = dict(
            model=model,
            encoder_output_dim=self.encoder_output_dim,
            encoder_outputs_transposed=self.encoder_outputs_transposed,
            decoder_hidden_state_t=self.hidden_t_intermediate,
            decoder_hidden_state_dim=self.decoder_state_dim,
            scope=self.name,
            encoder_lengths=self.encoder_lengths,
        )
        coverage_t = None
        if self.attention_type == AttentionType.Recurrent:
            context_t, self.attention_weights_3d, attention_blobs = apply_recurrent_attention(
                weighted_encoder_outputs=self.weighted_encoder_outputs,
                attention_weighted_encoder_context_t_prev=context_t_prev,
                **common,
            )
        elif self.attention_type == AttentionType.Regular:
            context_t, self.attention_weights_3d, attention_blobs = apply_regular_attention(
                weighted_encoder_outputs=self.weighted_encoder_outputs, **common
            )
        elif self.attention_type == AttentionType.Dot:
            context_t, self.attention_weights_3d, attention_blobs = apply_dot_attention(**common)
        else:
            (
                context_t,
                self.attention_weights_3d,
                attention_blobs,
                coverage_t,
            ) = apply_soft_coverage_attention(
                weighted_encoder_outputs=self.weighted_encoder_outputs,
                coverage_t_prev=coverage_t_prev,
                coverage_weights=self.coverage_weights,
                **common,
            )

        if self.attention_memory_optimization:
            self.recompute_blobs.extend(attention_blobs)

        output = list(decoder_states) + [context_t]
        if coverage_t is not None:
            output.append(coverage_t)
        # The decoder's output state is exposed under the attention cell's name; the
        # decoder's own blob stays the input of the attention ops.
        index = self.decoder_cell.get_output_state_index()
        output[index] = model.Copy(output[index], self.scope("hidden_t_external"))
        model.net.AddExternalOutputs(*output)
        return output

    def get_attention_weights(self):
        """[N, S, 1], the weights of the last step built."""
        return self.attention_weights_3d

    def prepare_input(self, model, input_blob):
        if self.encoder_outputs_transposed is None:
            # [N, D_e, S]
            self.encoder_outputs_transposed = brew.transpose(
                model,
                self.encoder_outputs,
                self.scope("encoder_outputs_transposed"),
                axes=[1, 2, 0],
            )
        if self.weighted_encoder_outputs is None and self.attention_type != AttentionType.Dot:
            # [S, N, D_e]
            self.weighted_encoder_outputs = brew.fc(
                model,
                self.encoder_outputs,
                self.scope("weighted_encoder_outputs"),
                dim_in=self.encoder_output_dim,
                dim_out=self.encoder_output_dim,
                axis=2,
            )
        return self.decoder_cell.prepare_input(model, input_blob)

    def build_initial_coverage(self, model):
        """Zeros [S] (the initial coverage state; its length is the encoder's, known only at
        run time), and the coverage weights, another FC of the encoder outputs."""
        assert self.attention_type == AttentionType.SoftCoverage
        # [S, N, D_e]
        self.coverage_weights = brew.fc(
            model,
            self.encoder_outputs,
            self.scope("coverage_weights"),
            dim_in=self.encoder_output_dim,
            dim_out=self.encoder_output_dim,
            axis=2,
        )
        encoder_length = model.net.Slice(
            model.net.Shape(self.encoder_outputs), starts=[0], ends=[1]
        )
        device = scope.CurrentDeviceScope()
        if device is not None and device.device_type == caffe2_pb2.CUDA:
            encoder_length = model.net.CopyGPUToCPU(encoder_length, "encoder_length_cpu")
        return model.net.ConstantFill(
            encoder_length, self.scope("initial_coverage"), value=0.0, input_as_shape=1
        )

    def get_state_names(self):
        state_names = list(self.decoder_cell.get_state_names())
        state_names[self.get_output_state_index()] = self.scope("hidden_t_external")
        state_names.append(self.scope("attention_weighted_encoder_context_t"))
        if self.attention_type == AttentionType.SoftCoverage:
            state_names.append(self.scope("coverage_t"))
        return state_names

    def get_output_dim(self):
        return self.decoder_state_dim + self.encoder_output_dim

    def get_output_state_index(self):
        return self.decoder_cell.get_output_state_index()

    def _prepare_output(self, model, states):
        attention_context = states[-self._num_attention_states()]
        with core.NameScope(self.name or ""):
            return brew.concat(
                model,
                [self.hidden_t_intermediate, attention_context],
                "states_and_context_combination",
                axis=2,
            )

    def _prepare_output_sequence(self, model, state_outputs):
        n_attention = self._num_attention_states()
        decoder_output = self.decoder_cell._prepare_output_sequence(
            model, state_outputs[: -2 * n_attention]
        )
        context_index = 2 * (len(self.get_state_names()) - n_attention)
        with core.NameScope(self.name or ""):
            return brew.concat(
                model,
                [decoder_output, state_outputs[context_index]],
                "states_and_context_combination",
                axis=2,
            )


class LSTMWithAttentionCell(AttentionCell):
    """An AttentionCell over an LSTMCell decoder named `<name>/decoder`."""

    _decoder_class = LSTMCell

    def __init__(
        self,
        encoder_output_dim,
        encoder_outputs,
        encoder_lengths,
        decoder_input_dim,
        decoder_state_dim,
        name,
        attention_type,
        weighted_encoder_outputs,
        forget_bias,
        lstm_memory_optimization,
        attention_memory_optimization,
        forward_only=False,
    ):
        decoder_cell = self._decoder_class(
            input_size=decoder_input_dim,
            hidden_size=decoder_state_dim,
            forget_bias=forget_bias,
            memory_optimization=lstm_memory_optimization,
            name="{}/decoder".format(name),
            forward_only=False,
            drop_states=False,
        )
        super(LSTMWithAttentionCell, self).__init__(
            encoder_output_dim=encoder_output_dim,
            encoder_outputs=encoder_outputs,
            encoder_lengths=encoder_lengths,
            decoder_cell=decoder_cell,
            decoder_state_dim=decoder_state_dim,
            name=name,
            attention_type=attention_type,
            weighted_encoder_outputs=weighted_encoder_outputs,
            attention_memory_optimization=attention_memory_optimization,
            forward_only=forward_only,
        )


class MILSTMWithAttentionCell(LSTMWithAttentionCell):
    """An AttentionCell over an MILSTMCell decoder named `<name>/decoder`."""

    _decoder_class = MILSTMCell


def LSTMWithAttention(
    model,
    decoder_inputs,
    decoder_input_lengths,
    initial_decoder_hidden_state,
    initial_decoder_cell_state,
    initial_attention_weighted_encoder_context,
    encoder_output_dim,
    encoder_outputs,
    encoder_lengths,
    decoder_input_dim,
    decoder_state_dim,
    scope,
    attention_type=AttentionType.Regular,
    outputs_with_grads=(0, 4),
    weighted_encoder_outputs=None,
    lstm_memory_optimization=False,
    attention_memory_optimization=False,
    forget_bias=0.0,
    forward_only=False,
):
    """An LSTM decoder with attention over `encoder_outputs` [S, N, D_e].

    Returns the op's outputs: hidden_all, hidden_last, cell_all, cell_last,
    attention_weighted_encoder_context_all [T, N, D_e], its last
    (and coverage_all, coverage_last with AttentionType.SoftCoverage).
    """
    cell = LSTMWithAttentionCell(
        encoder_output_dim=encoder_output_dim,
        encoder_outputs=encoder_outputs,
        encoder_lengths=encoder_lengths,
        decoder_input_dim=decoder_input_dim,
        decoder_state_dim=decoder_state_dim,
        name=scope,
        attention_type=attention_type,
        weighted_encoder_outputs=weighted_encoder_outputs,
        forget_bias=forget_bias,
        lstm_memory_optimization=lstm_memory_optimization,
        attention_memory_optimization=attention_memory_optimization,
        forward_only=forward_only,
    )
    initial_states = [
        initial_decoder_hidden_state,
        initial_decoder_cell_state,
        initial_attention_weighted_encoder_context,
    ]
    if attention_type == AttentionType.SoftCoverage:
        initial_states.append(cell.build_initial_coverage(model))
    _, result = cell.apply_over_sequence(
        model=model,
        inputs=decoder_inputs,
        seq_lengths=decoder_input_lengths,
        initial_states=initial_states,
        outputs_with_grads=outputs_with_grads,
    )
    return result
