"""The basic RNN and LSTM cells and the functions building whole (multi-layer) LSTMs.
caffe2.python.rnn_cell re-exports everything here.

Every LSTM flavour projects the input sequence once (`<name>/i2h`, FC over axis 2 to 4 * D
gates), adds the hidden-to-hidden projection of each step (`<name>/gates_t`), and runs the
LSTMUnit op (gate order i, f, o, g; `forget_bias` added to f; rows past their sequence length
keep their previous state, or zeros with `drop_states`).
"""
import functools

import numpy as np

from caffe2.python import brew, workspace
from caffe2.python.modeling.initializers import Initializer
from caffe2.python.rnn_cell_base import (
    LSTMInitializer,
    MultiRNNCell,
    RNNCell,
    UnrolledCell,
)


class BasicRNNCell(RNNCell):
    """h_t = activation(W_hh h_{t-1} + W_ih x_t + b), activation 'tanh' or 'relu'; rows past
    their sequence length keep h_{t-1} (zeros with drop_states)."""

    def __init__(
        self,
        input_size,
        hidden_size,
        forget_bias,
        memory_optimization,
        drop_states=False,
        initializer=None,
        activation=None,
        **kwargs,
    ):
        super(BasicRNNCell, self).__init__(**kwargs)
        self.drop_states = drop_states
        self.input_size = input_size
        self.hidden_size = hidden_size
        self.activation = activation
        if self.activation not in ["relu", "tanh"]:
            raise RuntimeError(
                "BasicRNNCell with unknown activation function ({})".format(self.activation)
            )

    def apply_override(self, model, input_t, seq_lengths, states, timestep, extra_inputs=None):
        hidden_t_prev = states[0]
        gates_t = brew.fc(
            model,
            hidden_t_prev,
            "gates_t",
            dim_in=self.hidden_size,
            dim_out=self.hidden_size,
            axis=2,
        )
        brew.sum(model, [gates_t, input_t], gates_t)
        if self.activation == "tanh":
            hidden_t = model.net.Tanh(gates_t, "hidden_t")
        else:
            hidden_t = model.net.Relu(gates_t, "hidden_t")

        if seq_lengths is not None:
            # valid[n] = t < seq_lengths[n], as a float mask over the batch axis.
            valid_b = model.net.GT([seq_lengths, timestep], "valid_b", broadcast=1)
            valid = model.net.Cast(valid_b, "valid", to="float")
            # The masks are constants of the lengths: no gradient flows into them.
            valid = model.net.StopGradient(valid, valid)
            hidden_valid = model.net.Mul([hidden_t, valid], "hidden_valid", broadcast=1, axis=1)
            if self.drop_states:
                hidden_t = hidden_valid
            else:
                invalid_b = model.net.LE([seq_lengths, timestep], "invalid_b", broadcast=1)
                invalid = model.net.Cast(invalid_b, "invalid", to="float")
                invalid = model.net.StopGradient(invalid, invalid)
                hidden_invalid = model.net.Mul(
                    [hidden_t_prev, invalid], "hidden_invalid", broadcast=1, axis=1
                )
                hidden_t = model.net.Add([hidden_valid, hidden_invalid], "hidden_t_masked")
        return (hidden_t,)

    def prepare_input(self, model, input_blob):
        return brew.fc(
            model,
            input_blob,
            self.scope("i2h"),
            dim_in=self.input_size,
            dim_out=self.hidden_size,
            axis=2,
        )

    def get_state_names_override(self):
        return ["hidden_t"]

    def get_output_dim(self):
        return self.hidden_size


class LSTMCell(RNNCell):
    """The LSTM: states (hidden_t, cell_t), output hidden_t."""

    def __init__(
        self,
        input_size,
        hidden_size,
        forget_bias,
        memory_optimization,
        drop_states=False,
        initializer=None,
        **kwargs,
    ):
        super(LSTMCell, self).__init__(initializer=initializer, **kwargs)
        self.initializer = initializer or LSTMInitializer(hidden_size=hidden_size)
        self.input_size = input_size
        self.hidden_size = hidden_size
        self.forget_bias = float(forget_bias)
        self.memory_optimization = memory_optimization
        self.drop_states = drop_states
        self.gates_size = 4 * self.hidden_size

    def _recurrent_input(self, model, hidden_t_prev, extra_inputs):
        """hidden_t_prev, or its concatenation with the extra inputs; and its size."""
        if not extra_inputs:
            return hidden_t_prev, self.hidden_size
        blobs, sizes = zip(*extra_inputs)
        concatenated = brew.concat(
            model, [hidden_t_prev] + list(blobs), "gates_concatenated_input_t", axis=2
        )
        return concatenated, self.hidden_size + sum(sizes)

    def _gates(self, model, input_t, hidden_t_prev, extra_inputs):
        fc_input, fc_input_dim = self._recurrent_input(model, hidden_t_prev, extra_inputs)
        gates_t = brew.fc(
            model, fc_input, "gates_t", dim_in=fc_input_dim, dim_out=self.gates_size, axis=2
        )
        brew.sum(model, [gates_t, input_t], gates_t)
        return gates_t

    def _lstm_unit(self, model, hidden_t_prev, cell_t_prev, gates_t, seq_lengths, timestep):
        inputs = [hidden_t_prev, cell_t_prev, gates_t]
        if seq_lengths is not None:
            inputs.append(seq_lengths)
        inputs.append(timestep)
        hidden_t, cell_t = model.net.LSTMUnit(
            inputs,
            ["hidden_state", "cell_state"],
            forget_bias=self.forget_bias,
            drop_states=self.drop_states,
            sequence_lengths=(seq_lengths is not None),
        )
        model.net.AddExternalOutputs(hidden_t, cell_t)
        if self.memory_optimization:
            self.recompute_blobs = [gates_t]
        return hidden_t, cell_t

    def apply_override(self, model, input_t, seq_lengths, states, timestep, extra_inputs=None):
        hidden_t_prev, cell_t_prev = states
        gates_t = self._gates(model, input_t, hidden_t_prev, extra_inputs)
        return self._lstm_unit(model, hidden_t_prev, cell_t_prev, gates_t, seq_lengths, timestep)

    def get_input_params(self):
        return {"weights": self.scope("i2h") + "_w", "biases": self.scope("i2h") + "_b"}

    def get_recurrent_params(self):
        return {"weights": self.scope("gates_t") + "_w", "biases": self.scope("gates_t") + "_b"}

    def prepare_input(self, model, input_blob):
        return brew.fc(
            model,
            input_blob,
            self.scope("i2h"),
            dim_in=self.input_size,
            dim_out=self.gates_size,
            axis=2,
        )

    def get_state_names_override(self):
        return ["hidden_t", "cell_t"]

    def get_output_dim(self):
        return self.hidden_size


class LayerNormLSTMCell(LSTMCell):
    """LSTMCell with the pre-activation gates layer-normalized (LayerNorm over the 4 * D gates,
    then a learned scale and bias `gates_t_norm_scale`, `gates_t_norm_bias`)."""

    def _gates(self, model, input_t, hidden_t_prev, extra_inputs):
        gates_t = super(LayerNormLSTMCell, self)._gates(model, input_t, hidden_t_prev, extra_inputs)
        gates_t, _, _ = brew.layer_norm(
            model, gates_t, "gates_t_norm", dim_in=self.gates_size, axis=-1
        )
        return gates_t


class MILSTMCell(LSTMCell):
    """The multiplicative-integration LSTM (Wu et al., 2016): with x the projected input and
    h the projected previous hidden state (`prev_t`), the gates are
    (alpha * x + beta1) * h + beta2 * x + b, parameters `alpha`, `beta1`, `beta2`, `b`."""

    def _gates(self, model, input_t, hidden_t_prev, extra_inputs):
        fc_input, fc_input_dim = self._recurrent_input(model, hidden_t_prev, extra_inputs)
        prev_t = brew.fc(
            model, fc_input, "prev_t", dim_in=fc_input_dim, dim_out=self.gates_size, axis=2
        )

        def param(name, value):
            return model.create_param(
                name, shape=[self.gates_size], initializer=Initializer("ConstantFill", value=value)
            )

        alpha, beta_h, beta_i, b = (
            param("alpha", 1.0),
            param("beta1", 1.0),
            param("beta2", 1.0),
            param("b", 0.0),
        )
        # (alpha * x + beta1) * h
        alpha_x_plus_beta_h = model.net.ElementwiseLinear(
            [input_t, alpha, beta_h], "alpha_by_input_t_plus_beta_h", axis=2
        )
        mi_term = model.net.Mul(
            [alpha_x_plus_beta_h, prev_t], "alpha_by_input_t_plus_beta_h_by_prev_t"
        )
        # beta2 * x + b
        linear_term = model.net.ElementwiseLinear(
            [input_t, beta_i, b], "beta_i_by_input_t_plus_b", axis=2
        )
        return brew.sum(model, [mi_term, linear_term], "gates_t")

    def get_recurrent_params(self):
        return {"weights": self.scope("prev_t") + "_w", "biases": self.scope("prev_t") + "_b"}


class LayerNormMILSTMCell(MILSTMCell):
    """MILSTMCell with layer-normalized gates (as LayerNormLSTMCell)."""

    def _gates(self, model, input_t, hidden_t_prev, extra_inputs):
        gates_t = super(LayerNormMILSTMCell, self)._gates(
            model, input_t, hidden_t_prev, extra_inputs
        )
        gates_t, _, _ = brew.layer_norm(
            model, gates_t, "gates_t_norm", dim_in=self.gates_size, axis=-1
        )
        return gates_t


def _LSTM(
    cell_class,
    model,
    input_blob,
    seq_lengths,
    initial_states,
    dim_in,
    dim_out,
    scope=None,
    outputs_with_grads=(0,),
    return_params=False,
    memory_optimization=False,
    forget_bias=0.0,
    forward_only=False,
    drop_states=False,
    return_last_layer_only=True,
    static_rnn_unroll_size=None,
    **cell_kwargs,
):
    """An LSTM (of `cell_class`) over `input_blob` (T, N, dim_in).

    `dim_out` is an int, or a list of one hidden size per layer (a MultiRNNCell then stacks
    the layers; `initial_states` then lists (hidden, cell) of every layer).
    `outputs_with_grads` indexes the outputs of the last layer.
    Returns (hidden_all, hidden_last, cell_all, cell_last) of the last layer (of every layer
    unless return_last_layer_only), plus, with return_params, a dict
    {'input': {'weights', 'biases'}, 'recurrent': {...}} of the parameter names (of layer 0
    in a stack).
    """
    if not isinstance(dim_out, (list, tuple)):
        dim_out = [dim_out]
    num_layers = len(dim_out)

    cells = [
        cell_class(
            input_size=(dim_in if i == 0 else dim_out[i - 1]),
            hidden_size=dim_out[i],
            forget_bias=forget_bias,
            memory_optimization=memory_optimization,
            name=scope if num_layers == 1 else None,
            forward_only=forward_only,
            drop_states=drop_states,
            **cell_kwargs,
        )
        for i in range(num_layers)
    ]
    if num_layers > 1:
        cell = MultiRNNCell(cells, name=scope, forward_only=forward_only)
    else:
        cell = cells[0]
    if static_rnn_unroll_size is not None:
        cell = UnrolledCell(cell, static_rnn_unroll_size)

    states_per_layer = len(cells[-1].get_state_names())
    first_of_last = 2 * states_per_layer * (num_layers - 1)
    outputs_with_grads = [first_of_last + i for i in outputs_with_grads]
    _, result = cell.apply_over_sequence(
        model=model,
        inputs=input_blob,
        seq_lengths=seq_lengths,
        initial_states=initial_states,
        outputs_with_grads=outputs_with_grads,
    )
    if return_last_layer_only:
        result = result[first_of_last:]
    if return_params:
        params = {
            "input": cells[0].get_input_params(),
            "recurrent": cells[0].get_recurrent_params(),
        }
        if num_layers > 1:
            # The layers of a stack are unnamed cells: the input projection (of layer 0) is
            # under the stack's scope, layer 0's recurrent projection under `layer_0/`.
            stack = (scope + "/") if scope else ""
            params["input"] = {k: stack + v for k, v in params["input"].items()}
            params["recurrent"] = {
                k: stack + "layer_0/" + v for k, v in params["recurrent"].items()
            }
        result = list(result) + [params]
    return tuple(result)


LSTM = functools.partial(_LSTM, LSTMCell)
BasicRNN = functools.partial(_LSTM, BasicRNNCell)
MILSTM = functools.partial(_LSTM, MILSTMCell)
LayerNormLSTM = functools.partial(_LSTM, LayerNormLSTMCell)
LayerNormMILSTM = functools.partial(_LSTM, LayerNormMILSTMCell)


def cudnn_LSTM(*args, **kwargs):
    """Upstream's cuDNN LSTM needs the cuDNN `Recurrent` op (and its packed parameter blob),
    which this library does not register."""
    raise NotImplementedError(
        "cudnn_LSTM needs the cuDNN 'Recurrent' operator, which this build does not "
        "register; use rnn_cell.LSTM (RecurrentNetwork + LSTMUnit) instead"
    )


def GetLSTMParamNames():
    """The per-gate parameter names InitFromLSTMParams reads, in the LSTMUnit gate order."""
    weight_params = ["input_gate_w", "forget_gate_w", "output_gate_w", "cell_w"]
    bias_params = ["input_gate_b", "forget_gate_b", "output_gate_b", "cell_b"]
    return {"weights": weight_params, "biases": bias_params}


def InitFromLSTMParams(lstm_pblobs, param_values):
    """Overwrites the parameters of an LSTM with per-gate values.

    Args:
      lstm_pblobs: the parameter dict LSTM(..., return_params=True) returns,
        {'input': {'weights': blob, 'biases': blob}, 'recurrent': {...}}.
      param_values: {'input' or 'recurrent': {name from GetLSTMParamNames(): array}}; the
        four gates' blocks are stacked (i, f, o, g) into the fused blobs.
    """
    names = GetLSTMParamNames()
    for input_type, values in param_values.items():
        weights = np.concatenate([np.asarray(values[w]).ravel() for w in names["weights"]])
        biases = np.concatenate([np.asarray(values[b]).ravel() for b in names["biases"]])
        weights_blob = lstm_pblobs[input_type]["weights"]
        bias_blob = lstm_pblobs[input_type]["biases"]
        current_w = workspace.FetchBlob(weights_blob)
        current_b = workspace.FetchBlob(bias_blob)
        workspace.FeedBlob(weights_blob, weights.reshape(current_w.shape).astype(np.float32))
        workspace.FeedBlob(bias_blob, biases.reshape(current_b.shape).astype(np.float32))
