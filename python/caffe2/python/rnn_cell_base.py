"""The RNNCell base class and the cells that wrap other cells (DropoutCell, MultiRNNCell,
UnrolledCell). caffe2.python.rnn_cell re-exports everything here.

A cell describes one timestep. `apply_over_sequence` builds the step net of the cell in a
step model sharing the parameters of `model`, and wraps it into a RecurrentNetwork op
(caffe2.python.recurrent); `apply` adds one timestep directly to a net (decoding loops).

A custom cell overrides:
  - apply_override(model, input_t, seq_lengths, states, timestep[, extra_inputs]): adds the
    ops of one step under the cell's name scope; returns the new states;
  - get_state_names_override(): the names of the states (scoped by get_state_names);
  - get_output_dim(); optionally prepare_input (ops run once over the whole sequence, such
    as the input-to-hidden projection) and get_output_state_index.
"""
import inspect

from caffe2.proto import caffe2_pb2
from caffe2.python import brew, core, recurrent, scope, utils
from caffe2.python.model_helper import ModelHelper
from caffe2.python.modeling.parameter_sharing import ParameterSharing


def _RectifyName(blob_reference_or_name):
    """A blob name becomes a reference scoped by the current name scope (so that later name
    scopes do not change it); a reference stays as it is."""
    if blob_reference_or_name is None:
        return None
    if isinstance(blob_reference_or_name, str):
        return core.ScopedBlobReference(blob_reference_or_name)
    if not isinstance(blob_reference_or_name, core.BlobReference):
        raise Exception("Unknown blob reference type: {}".format(type(blob_reference_or_name)))
    return blob_reference_or_name


def _RectifyNames(blob_references_or_names):
    if blob_references_or_names is None:
        return None
    return [_RectifyName(x) for x in blob_references_or_names]


class RNNCell(object):
    """Base class of the recurrent cells (see the module docstring)."""

    def __init__(self, name=None, forward_only=False, initializer=None):
        self.name = name
        self.recompute_blobs = []
        self.forward_only = forward_only
        self._initializer = initializer

    @property
    def initializer(self):
        return self._initializer

    @initializer.setter
    def initializer(self, value):
        self._initializer = value

    def scope(self, name):
        return self.name + "/" + name if self.name is not None else name

    def apply_over_sequence(
        self, model, inputs, seq_lengths=None, initial_states=None, outputs_with_grads=None
    ):
        """Runs the cell over `inputs` (T, N, dim) with a RecurrentNetwork op.

        Returns (output sequence, outputs of the op): the op gives two blobs per state,
        `<state>_all` (T, N, D) and `<state>_last` (1, N, D), in get_state_names() order.
        """
        if initial_states is None:
            with scope.NameScope(self.name):
                if self.initializer is None:
                    raise Exception("Either initial states or initializer have to be set")
                initial_states = self.initializer.create_states(model)

        preprocessed_inputs = self.prepare_input(model, inputs)
        step_model = ModelHelper(name=self.name, param_model=model)
        input_t, timestep = step_model.net.AddScopedExternalInputs("input_t", "timestep")
        utils.raiseIfNotEqual(
            len(initial_states),
            len(self.get_state_names()),
            "Number of initial state values provided doesn't match the number of states",
        )
        states_prev = step_model.net.AddScopedExternalInputs(
            *[name + "_prev" for name in self.get_state_names()]
        )
        states = self._apply(
            model=step_model,
            input_t=input_t,
            seq_lengths=seq_lengths,
            states=states_prev,
            timestep=timestep,
        )
        declared = set(step_model.net.Proto().external_output)
        for state in states:
            if str(state) not in declared:
                step_model.net.AddExternalOutput(state)
                declared.add(str(state))

        if outputs_with_grads is None:
            outputs_with_grads = [self.get_output_state_index() * 2]

        states_for_all_steps = recurrent.recurrent_net(
            net=model.net,
            cell_net=step_model.net,
            inputs=[(input_t, preprocessed_inputs)],
            initial_cell_inputs=list(zip(states_prev, initial_states)),
            links=dict(zip(states_prev, states)),
            timestep=timestep,
            scope=self.name,
            forward_only=self.forward_only,
            outputs_with_grads=outputs_with_grads,
            recompute_blobs_on_backward=self.recompute_blobs,
        )
        output = self._prepare_output_sequence(model, states_for_all_steps)
        return output, states_for_all_steps

    def apply(self, model, input_t, seq_lengths, states, timestep):
        """Adds one timestep to `model.net`; returns (output, new states)."""
        input_t = self.prepare_input(model, input_t)
        states = self._apply(model, input_t, seq_lengths, states, timestep)
        output = self._prepare_output(model, states)
        return output, states

    def apply_override(self, model, input_t, seq_lengths, states, timestep, extra_inputs=None):
        """The ops of one timestep (names are scoped by the cell's name); returns the new
        states. `extra_inputs`, a list of (blob, dim), are concatenated to the recurrent
        input by the cells that take them (attention contexts)."""
        raise NotImplementedError("Abstract method")

    def _apply(self, model, input_t, seq_lengths, states, timestep, extra_inputs=None):
        args = self._rectify_apply_inputs(input_t, seq_lengths, states, timestep, extra_inputs)
        with core.NameScope(self.name):
            return self.apply_override(model, *args)

    def _rectify_apply_inputs(self, input_t, seq_lengths, states, timestep, extra_inputs):
        # Outer names become references before the cell's name scope is entered.
        input_t, seq_lengths, timestep = _RectifyNames([input_t, seq_lengths, timestep])
        states = _RectifyNames(states)
        if extra_inputs:
            names, sizes = zip(*extra_inputs)
            extra_inputs = list(zip(_RectifyNames(names), sizes))
        rectified = [input_t, seq_lengths, states, timestep]
        if "extra_inputs" in inspect.signature(self.apply_override).parameters:
            rectified.append(extra_inputs)
        elif extra_inputs:
            raise Exception("{} takes no extra_inputs".format(type(self).__name__))
        return rectified

    def prepare_input(self, model, input_blob):
        """Ops applied once to the whole input sequence before the recurrence."""
        return input_blob

    def get_output_state_index(self):
        """Index in get_state_names() of the state that is the cell's output."""
        return 0

    def get_state_names(self):
        """The names of the recurrent states, scoped by the cell's name."""
        return [self.scope(name) for name in self.get_state_names_override()]

    def get_state_names_override(self):
        raise NotImplementedError("Abstract method")

    def get_output_dim(self):
        raise NotImplementedError("Abstract method")

    def _prepare_output(self, model, states):
        return states[self.get_output_state_index()]

    def _prepare_output_sequence(self, model, state_outputs):
        return state_outputs[2 * self.get_output_state_index()]


class LSTMInitializer(object):
    """Zero initial hidden and cell states of size `hidden_size`, as parameters."""

    def __init__(self, hidden_size):
        self.hidden_size = hidden_size

    def create_states(self, model):
        from caffe2.python.modeling.initializers import Initializer

        return [
            model.create_param(
                param_name=name,
                initializer=Initializer(operator_name="ConstantFill", value=0.0),
                shape=[self.hidden_size],
            )
            for name in ("initial_hidden_state", "initial_cell_state")
        ]


class MultiRNNCellInitializer(object):
    """The initial states of each layer, from each cell's initializer."""

    def __init__(self, cells):
        self.cells = cells

    def create_states(self, model):
        states = []
        for i, cell in enumerate(self.cells):
            if cell.initializer is None:
                raise Exception("Either initial states or initializer have to be set")
            with core.NameScope("layer_{}".format(i)), core.NameScope(cell.name):
                states.extend(cell.initializer.create_states(model))
        return states


class DropoutCell(RNNCell):
    """Applies dropout to the output of `internal_cell` (not to its recurrent states).
    `is_test` is required."""

    def __init__(self, internal_cell, dropout_ratio=None, use_cudnn=False, **kwargs):
        self.internal_cell = internal_cell
        self.dropout_ratio = dropout_ratio
        assert "is_test" in kwargs, "Argument 'is_test' is required"
        self.is_test = kwargs.pop("is_test")
        self.use_cudnn = use_cudnn
        super(DropoutCell, self).__init__(**kwargs)

        self.prepare_input = internal_cell.prepare_input
        self.get_output_state_index = internal_cell.get_output_state_index
        self.get_state_names = internal_cell.get_state_names
        self.get_output_dim = internal_cell.get_output_dim
        self.mask = 0

    def _apply(self, model, input_t, seq_lengths, states, timestep, extra_inputs=None):
        return self.internal_cell._apply(
            model, input_t, seq_lengths, states, timestep, extra_inputs
        )

    def _prepare_output(self, model, states):
        output = self.internal_cell._prepare_output(model, states)
        return self._apply_dropout(model, output)

    def _prepare_output_sequence(self, model, state_outputs):
        output = self.internal_cell._prepare_output_sequence(model, state_outputs)
        return self._apply_dropout(model, output)

    def _apply_dropout(self, model, output):
        if self.dropout_ratio and not self.forward_only:
            with core.NameScope(self.name or ""):
                output = brew.dropout(
                    model,
                    output,
                    str(output) + "_with_dropout_mask{}".format(self.mask),
                    ratio=float(self.dropout_ratio),
                    is_test=self.is_test,
                    use_cudnn=self.use_cudnn,
                )
                self.mask += 1
        return output


class MultiRNNCell(RNNCell):
    """Stacks cells: layer i + 1 reads the output of layer i. The states are those of every
    layer in order, named `<name>/layer_<i>/<cell state>`.

    `residual_output_layers`: layers i (i > 0) whose input is added to their output before it
    goes to the next layer; consecutive residual layers up to the last one are also summed
    into the cell's output (`output_indices` lists the states that make it).
    """

    def __init__(self, cells, residual_output_layers=None, **kwargs):
        super(MultiRNNCell, self).__init__(**kwargs)
        self.cells = cells
        self.residual_output_layers = list(residual_output_layers or [])

        output_index_per_layer = []
        base_index = 0
        for cell in self.cells:
            output_index_per_layer.append(base_index + cell.get_output_state_index())
            base_index += len(cell.get_state_names())

        self.output_connected_layers = []
        self.output_indices = []
        for i in range(len(self.cells) - 1):
            if (i + 1) in self.residual_output_layers:
                self.output_connected_layers.append(i)
                self.output_indices.append(output_index_per_layer[i])
            else:
                self.output_connected_layers = []
                self.output_indices = []
        self.output_connected_layers.append(len(self.cells) - 1)
        self.output_indices.append(output_index_per_layer[-1])

        self.state_names = []
        for i, cell in enumerate(self.cells):
            self.state_names.extend(
                "layer_{}/{}".format(i, name) for name in cell.get_state_names()
            )
        self.initializer = MultiRNNCellInitializer(cells)

    def prepare_input(self, model, input_blob):
        input_blob = _RectifyName(input_blob)
        with core.NameScope(self.name or ""):
            return self.cells[0].prepare_input(model, input_blob)

    def apply_override(self, model, input_t, seq_lengths, states, timestep, extra_inputs=None):
        states_per_layer = [len(cell.get_state_names()) for cell in self.cells]
        assert len(states) == sum(states_per_layer)

        next_states = []
        states_index = 0
        layer_input = input_t
        for i, layer_cell in enumerate(self.cells):
            with core.NameScope("layer_{}".format(i)):
                num_states = states_per_layer[i]
                layer_states = states[states_index : states_index + num_states]
                states_index += num_states
                if i > 0:
                    prepared_input = layer_cell.prepare_input(model, layer_input)
                else:
                    prepared_input = layer_input
                layer_next_states = layer_cell._apply(
                    model,
                    prepared_input,
                    seq_lengths,
                    timestep=timestep,
                    states=layer_states,
                    extra_inputs=extra_inputs,
                )
                if i != len(self.cells) - 1:
                    layer_output = layer_cell._prepare_output(model, layer_next_states)
                    if i > 0 and i in self.residual_output_layers:
                        layer_input = brew.sum(
                            model,
                            [layer_output, layer_input],
                            "residual_output_{}".format(i),
                        )
                    else:
                        layer_input = layer_output
                next_states.extend(layer_next_states)
        return next_states

    def get_state_names(self):
        return [self.scope(name) for name in self.state_names]

    def get_state_names_override(self):
        return list(self.state_names)

    def get_output_state_index(self):
        index = sum(len(cell.get_state_names()) for cell in self.cells[:-1])
        return index + self.cells[-1].get_output_state_index()

    def get_output_dim(self):
        return self.cells[-1].get_output_dim()

    def _connected_outputs(self, model, states, per_state, prepare):
        outputs = []
        index = 0
        for i, cell in enumerate(self.cells):
            count = per_state * len(cell.get_state_names())
            if i in self.output_connected_layers:
                outputs.append(getattr(cell, prepare)(model, states[index : index + count]))
            index += count
        return outputs

    def _prepare_output(self, model, states):
        outputs = self._connected_outputs(model, states, 1, "_prepare_output")
        if len(outputs) > 1:
            return brew.sum(model, outputs, self.scope("residual_output"))
        return outputs[0]

    def _prepare_output_sequence(self, model, states):
        outputs = self._connected_outputs(model, states, 2, "_prepare_output_sequence")
        if len(outputs) > 1:
            return brew.sum(model, outputs, self.scope("residual_output_sequence"))
        return outputs[0]


class UnrolledCell(RNNCell):
    """Runs `cell` over a sequence of a fixed length T without a RecurrentNetwork op: the
    steps are T copies of the cell's ops in the main net (parameters shared)."""

    def __init__(self, cell, T):
        super(UnrolledCell, self).__init__(name=None, forward_only=cell.forward_only)
        self.T = T
        self.cell = cell

    def get_state_names(self):
        return self.cell.get_state_names()

    def get_output_state_index(self):
        return self.cell.get_output_state_index()

    def get_output_dim(self):
        return self.cell.get_output_dim()

    def apply_over_sequence(
        self, model, inputs, seq_lengths=None, initial_states=None, outputs_with_grads=None
    ):
        inputs = self.cell.prepare_input(model, inputs)
        split_inputs = model.net.Split(
            inputs, [str(inputs) + "_timestep_{}".format(i) for i in range(self.T)], axis=0
        )
        if self.T == 1:
            split_inputs = [split_inputs]

        states = initial_states
        all_states = []
        for t in range(self.T):
            scope_name = "timestep_{}".format(t)
            # Every step reads the same (unscoped) parameters.
            with ParameterSharing({scope_name: ""}), scope.NameScope(scope_name):
                timestep = model.param_init_net.ConstantFill(
                    [],
                    "timestep",
                    value=t,
                    shape=[1],
                    dtype=core.DataType.INT32,
                    device_option=core.DeviceOption(caffe2_pb2.CPU),
                )
                states = self.cell._apply(
                    model=model,
                    input_t=split_inputs[t],
                    seq_lengths=seq_lengths,
                    states=states,
                    timestep=timestep,
                )
            all_states.append(states)

        outputs = []
        prefix = len("timestep_0/")
        for per_step in zip(*all_states):
            base = str(per_step[0])[prefix:]
            full, _ = model.net.Concat(
                list(per_step), [base + "_concat", base + "_concat_info"], axis=0
            )
            outputs.extend([full, per_step[-1]])
        output = self.cell._prepare_output_sequence(model, outputs)
        return output, outputs
