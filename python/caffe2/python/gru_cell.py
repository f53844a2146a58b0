"""The GRU cell (upstream's caffe2.python.gru_cell) and GRU(), built like rnn_cell.LSTM.

The input projection `<name>/i2h` gives 3 * D gates (reset r, update u, output o). At each
step the reset gate is applied here, outside the GRUUnit op:
    r = sigmoid(W_r h + x_r)
    o = W_o (r * h) + x_o        (linear_before_reset: r * (W_o h) + x_o, cuDNN's form)
    u = W_u h + x_u
and GRUUnit([h, concat(r, u, o), seq_lengths, timestep]) computes
    h_t = h * sigmoid(u) + tanh(o) * (1 - sigmoid(u)),
keeping h (or zeros with drop_states) for rows past their sequence length. A GRU has no forget
gate: `forget_bias` is kept in the signature for upstream's callers and used nowhere.
"""
import functools

from caffe2.python import brew, rnn_cell


class GRUCell(rnn_cell.RNNCell):
    def __init__(
        self,
        input_size,
        hidden_size,
        forget_bias,
        memory_optimization,
        drop_states=False,
        linear_before_reset=False,
        **kwargs,
    ):
        super(GRUCell, self).__init__(**kwargs)
        self.input_size = input_size
        self.hidden_size = hidden_size
        self.forget_bias = float(forget_bias)
        self.memory_optimization = memory_optimization
        self.drop_states = drop_states
        self.linear_before_reset = linear_before_reset

    def _hidden_fc(self, model, blob_in, name):
        return brew.fc(
            model, blob_in, name, dim_in=self.hidden_size, dim_out=self.hidden_size, axis=2
        )

    def apply_override(self, model, input_t, seq_lengths, states, timestep, extra_inputs=None):
        hidden_t_prev = states[0]
        input_t_reset, input_t_update, input_t_output = model.net.Split(
            [input_t], ["input_t_reset", "input_t_update", "input_t_output"], axis=2
        )
        reset_gate_t = self._hidden_fc(model, hidden_t_prev, "reset_gate_t")
        update_gate_t = self._hidden_fc(model, hidden_t_prev, "update_gate_t")

        reset_gate_t = model.net.Sum([reset_gate_t, input_t_reset], "reset_gate_t")
        reset_gate_t_sigmoid = model.net.Sigmoid(reset_gate_t, "reset_gate_t_sigmoid")
        if self.linear_before_reset:
            output_gate_fc = self._hidden_fc(model, hidden_t_prev, "output_gate_t")
            output_gate_t = model.net.Mul(
                [reset_gate_t_sigmoid, output_gate_fc], "output_gate_t_mul"
            )
        else:
            modified_hidden_t_prev = model.net.Mul(
                [reset_gate_t_sigmoid, hidden_t_prev], "modified_hidden_t_prev"
            )
            output_gate_t = self._hidden_fc(model, modified_hidden_t_prev, "output_gate_t")

        update_gate_t = model.net.Sum([update_gate_t, input_t_update], "update_gate_t")
        output_gate_t = model.net.Sum([output_gate_t, input_t_output], "output_gate_t_summed")
        gates_t, _ = model.net.Concat(
            [reset_gate_t, update_gate_t, output_gate_t],
            ["gates_t", "_gates_t_concat_dims"],
            axis=2,
        )

        inputs = [hidden_t_prev, gates_t]
        if seq_lengths is not None:
            inputs.append(seq_lengths)
        inputs.append(timestep)
        hidden_t = model.net.GRUUnit(
            inputs,
            ["hidden_t"],
            drop_states=self.drop_states,
            sequence_lengths=(seq_lengths is not None),
        )
        model.net.AddExternalOutputs(hidden_t)
        return (hidden_t,)

    def prepare_input(self, model, input_blob):
        return brew.fc(
            model,
            input_blob,
            self.scope("i2h"),
            dim_in=self.input_size,
            dim_out=3 * self.hidden_size,
            axis=2,
        )

    def get_input_params(self):
        return {"weights": self.scope("i2h") + "_w", "biases": self.scope("i2h") + "_b"}

    def get_recurrent_params(self):
        return {
            "weights": self.scope("update_gate_t") + "_w",
            "biases": self.scope("update_gate_t") + "_b",
        }

    def get_state_names_override(self):
        return ["hidden_t"]

    def get_output_dim(self):
        return self.hidden_size


GRU = functools.partial(rnn_cell._LSTM, GRUCell)
