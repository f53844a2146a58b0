"""recurrent_net: wraps a one-timestep net (the cell) into a RecurrentNetwork op.

The cell net reads, at step t, the sequence slice `input_t`, the previous value of each
recurrent state, the `timestep` blob and any outer blob (a "reference": parameters, encoder
outputs, ...), and writes the next value of each state. recurrent_net derives the cell's
backward step net with the gradient registry, then describes to the op how each step's
blobs map onto the op's whole-sequence tensors:

- links (internal blob, external tensor, offset): at step t the internal blob is a view of
  row `t + offset` of the external tensor. Each state `s` has a `<scope>/<s>_states` tensor
  of T + 1 rows: the previous value reads row t, the new value writes row t + 1.
- aliases (source tensor, output name, offset): the op's outputs `<cell output>_all`
  (rows 1.. of the states tensor) and `<cell output>_last` (its last row).
- backward links: the same for the gradients of the states and of the input sequence.

    outputs = recurrent_net(net, cell_net, inputs=[(input_t, seq)],
                            initial_cell_inputs=[(h_prev, h0)], links={h_prev: h_t},
                            timestep=timestep, scope="rnn")
    h_all, h_last = outputs
"""
from caffe2.python import core, utils


def _scoped(op_name, scope, name):
    # Blobs of the op are named under its scope by hand: the cell's internal names and the
    # op's external names must not pick up the caller's name scope twice.
    return "{}/{}".format(str(op_name if scope is None else scope), str(name))


def _columns(triples):
    """[(a, b, c), ...] -> ([a...], [b...], [c...])."""
    if not triples:
        return [], [], []
    return tuple(list(column) for column in zip(*triples))


def _cell_gradients(cell_proto, state_outputs):
    """The gradient ops of the cell for the gradients `<state>_grad` of its new states.

    The states are passed to the gradient registry as targets with generated gradients, so
    that when a cell op also reads a new state (one used within the step), the registry sums
    that op's contribution with the state's own gradient; the generated fills are then
    dropped and their blobs renamed `<state>_grad`, the blobs the op feeds.
    Returns (gradient ops, {forward blob: gradient blob name}).
    """
    targets = []
    for state in state_outputs:
        if str(state) not in targets:
            targets.append(str(state))
    grad_ops, grad_map = core.GradientRegistry.GetBackwardPass(
        cell_proto.op, {t: None for t in targets}
    )
    rename = {}
    for op in grad_ops[: len(targets)]:
        assert op.type == "ConstantFill" and list(op.input) in ([t] for t in targets), op
        rename[op.output[0]] = op.input[0] + "_grad"
    grad_ops = list(grad_ops[len(targets) :])
    for op in grad_ops:
        for names in (op.input, op.output):
            for j, name in enumerate(names):
                names[j] = rename.get(name, name)
    grad_map = {str(k): rename.get(str(v), str(v)) for k, v in grad_map.items()}
    return grad_ops, grad_map


def _backward_step_net(cell_proto, state_outputs, recompute_blobs_on_backward):
    """The backward step net of the cell (see _cell_gradients).

    Returns (backward net, {forward blob name: gradient blob name}). Ops producing
    `recompute_blobs_on_backward` are replayed first so that the backward pass recomputes
    those blobs instead of keeping them per step.
    """
    grad_ops, grad_map = _cell_gradients(cell_proto, state_outputs)

    backward = core.Net("RecurrentBackwardStep")
    proto = backward.Proto()
    del proto.op[:]
    if recompute_blobs_on_backward:
        recompute = set(str(b) for b in recompute_blobs_on_backward)
        for op in cell_proto.op:
            if recompute.isdisjoint(op.output):
                continue
            assert (
                set(op.output) <= recompute
            ), "Op {} writes blobs other than those to recompute ({})".format(
                op.type, sorted(recompute)
            )
            proto.op.extend([op])
    proto.op.extend(grad_ops)

    backward_ssa, _ = core.get_ssa(proto)
    undefined = core.get_undefined_blobs(backward_ssa)
    # Intermediate blobs of the forward step that the backward step reads: they are kept
    # in each step workspace and declared as inputs of the backward step.
    _, forward_versions = core.get_ssa(cell_proto)
    outputs = set(cell_proto.external_output)
    proto.external_input.extend(
        sorted(
            blob
            for blob, version in forward_versions.items()
            if version > 0 and blob in undefined and blob not in outputs
        )
    )
    proto.type = "simple"
    return backward, grad_map


def _accumulate_into_external_gradients(backward):
    """Makes every op that overwrites an input of the backward step net add to it instead.

    An input gradient such as `<state>_grad` already holds the gradient arriving from the
    outside (from the next timestep, or the op's output gradient); an op computing another
    contribution writes `<blob>_accum`, followed by Sum([<blob>, <blob>_accum], <blob>).
    An in-place op already takes the current value into account.
    """
    proto = backward.Proto()
    original = list(proto.op)
    del proto.op[:]
    external = set(proto.external_input)
    for op in original:
        proto.op.extend([op])
        appended = proto.op[len(proto.op) - 1]
        for j, out in enumerate(list(appended.output)):
            if out not in external or out in appended.input:
                continue
            accum = out + "_accum"
            appended.output[j] = accum
            backward.Sum([core.BlobReference(out), core.BlobReference(accum)], [out])


def _linkable(backward, grad, backward_links):
    """A blob holding `grad` that no other backward link uses.

    A step blob is a view of one row of one tensor, so a gradient blob already linked (one
    passed through unchanged, as the gradient of a Sum's inputs is its output's) is copied
    into a blob of its own at the end of the backward step."""
    grad = str(grad)
    linked = set(link[0] for link in backward_links)
    if grad not in linked:
        return grad
    copy = grad + "_copy"
    while copy in linked:
        copy += "_copy"
    backward.Copy([core.BlobReference(grad)], [copy])
    return copy


def recurrent_net(
    net,
    cell_net,
    inputs,
    initial_cell_inputs,
    links,
    timestep=None,
    scope=None,
    outputs_with_grads=(0,),
    recompute_blobs_on_backward=None,
    forward_only=False,
):
    """Adds a RecurrentNetwork op running `cell_net` over a sequence to `net`.

    Args:
      net: the net to add the op to.
      cell_net: the net of one timestep. Its external inputs are the internal input name,
        the previous states, the timestep blob, and the outer blobs it reads (references);
        its external outputs are the new states.
      inputs: [(internal name, external sequence blob (T, N, ...))]; exactly one pair.
      initial_cell_inputs: [(internal previous-state name, external initial value)].
      links: {internal previous-state name: internal new-state name}.
      timestep: the cell's timestep blob (default "timestep").
      scope: prefix of the op's internal blob names (default: a fresh name).
      outputs_with_grads: indices of the outputs whose gradients flow back.
      recompute_blobs_on_backward: blobs of the cell recomputed by the backward step rather
        than kept from the forward step.
      forward_only: build no backward step net.

    Returns:
      The op's outputs, two per state in `initial_cell_inputs` order: `<new state>_all`
      (T, N, D) and `<new state>_last` (1, N, D).
    """
    assert len(inputs) == 1, "Only one input blob is supported so far"

    input_blobs = [str(i[0]) for i in inputs]
    initial_input_blobs = [str(x[1]) for x in initial_cell_inputs]
    op_name = net.NextName("recurrent")

    def s(name):
        return _scoped(op_name, scope, name)

    # Everything the cell reads that is neither the sequence slice, a state nor the
    # timestep is an outer blob: the op takes it as an input ("reference").
    known = set(input_blobs + initial_input_blobs)
    known.update(str(x[0]) for x in initial_cell_inputs)
    if timestep is not None:
        known.add(str(timestep))
    links = {str(k): str(v) for k, v in links.items()}
    cell_proto = cell_net.Proto()
    references = [core.BlobReference(b) for b in cell_proto.external_input if b not in known]

    backward = None
    if not forward_only:
        state_outputs = [links[str(x[0])] for x in initial_cell_inputs]
        backward, grad_map = _backward_step_net(
            cell_proto, state_outputs, recompute_blobs_on_backward
        )

    all_inputs = [i[1] for i in inputs] + [x[1] for x in initial_cell_inputs] + references
    all_outputs = []
    cell_proto.type = "simple"

    forward_links = []
    backward_links = []
    aliases = []
    recurrent_states = []
    for cell_input, _ in initial_cell_inputs:
        cell_input = str(cell_input)
        cell_output = str(links[cell_input])
        states = s(cell_input + "_states")
        forward_links.append((cell_input, states, 0))
        forward_links.append((cell_output, states, 1))
        aliases.append((states, cell_output + "_all", 1))
        aliases.append((states, cell_output + "_last", -1))
        all_outputs.extend([cell_output + "_all", cell_output + "_last"])
        recurrent_states.append(states)
        if backward is not None:
            # The gradient of the new state is row t + 1 of the states' gradient.
            backward_links.append((cell_output + "_grad", states + "_grad", 1))
            backward.Proto().external_input.append(cell_output + "_grad")

    for input_t, input_blob in inputs:
        forward_links.append((str(input_t), str(input_blob), 0))

    if backward is not None:
        proto = backward.Proto()
        proto.external_input.extend(cell_proto.external_input)
        proto.external_input.extend(cell_proto.external_output)
        _accumulate_into_external_gradients(backward)
        # The gradients of the previous states (row t of the states' gradients) and of the
        # input slice (row t of the input's gradient).
        targets = [(str(x[0]), s(str(x[0]) + "_states") + "_grad") for x in initial_cell_inputs]
        targets += [(str(i[0]), str(i[1]) + "_grad") for i in inputs]
        for blob, external in targets:
            if blob not in grad_map:
                continue  # nothing in the cell depends on it: its gradient stays zero
            internal = _linkable(backward, grad_map[blob], backward_links)
            backward_links.append((internal, external, 0))

    link_internal, link_external, link_offset = _columns(forward_links)
    alias_src, alias_dst, alias_offset = _columns(aliases)

    backward_args = {}
    if backward is not None:
        b_internal, b_external, b_offset = _columns(backward_links)
        params = [r for r in references if str(r) in grad_map]
        all_input_names = [str(b) for b in all_inputs]
        backward_args = {
            "param": [all_input_names.index(str(p)) for p in params],
            "param_grads": [str(grad_map[str(p)]) for p in params],
            "backward_link_internal": [str(x) for x in b_internal],
            "backward_link_external": [str(x) for x in b_external],
            "backward_link_offset": list(b_offset),
            "outputs_with_grads": list(outputs_with_grads),
            "recompute_blobs_on_backward": [str(b) for b in recompute_blobs_on_backward or []],
        }
        if len(backward.Proto().op) != 0:
            backward_args["backward_step_net"] = backward.Proto()

    all_input_names = [str(b) for b in all_inputs]
    results = net.RecurrentNetwork(
        all_inputs,
        all_outputs + [s("step_workspaces")],
        alias_src=alias_src,
        alias_dst=[str(a) for a in alias_dst],
        alias_offset=alias_offset,
        recurrent_states=recurrent_states,
        initial_recurrent_state_ids=[all_input_names.index(str(x[1])) for x in initial_cell_inputs],
        link_internal=[str(x) for x in link_internal],
        link_external=[str(x) for x in link_external],
        link_offset=link_offset,
        enable_rnn_executor=1,
        step_net=cell_proto,
        timestep="timestep" if timestep is None else str(timestep),
        **backward_args,
    )
    cell_proto.type = "simple"
    # The last output (the step workspaces) only serves the gradient op.
    return results[:-1]


def set_rnn_executor_config(rnn_op, num_threads=None, max_cuda_streams=None):
    """Sets the RNN executor's `rnn_executor.num_threads` / `max_cuda_streams` arguments of a
    RecurrentNetwork op (or its gradient op)."""
    assert rnn_op.type in ("RecurrentNetwork", "RecurrentNetworkGradient")

    def set_arg(name, value):
        for arg in rnn_op.arg:
            if arg.name == name:
                arg.i = int(value)
                return
        rnn_op.arg.extend([utils.MakeArgument(name, int(value))])

    if num_threads is not None:
        set_arg("rnn_executor.num_threads", num_threads)
    if max_cuda_streams is not None:
        set_arg("rnn_executor.max_cuda_streams", max_cuda_streams)


def retrieve_step_blobs(net, prefix="rnn"):
    """Adds a RecurrentNetworkBlobFetcher for every RecurrentNetwork op of `net`, which copies
    each step workspace's blobs into the outer workspace as `<prefix>_<step>_<blob>`.
    Returns the names of the fetchers' outputs (blobs holding the list of copied names)."""
    output_list = []
    rnn_ops = [op for op in net.Proto().op if op.type == "RecurrentNetwork"]
    for count, op in enumerate(rnn_ops):
        blob_name = "{}_{}".format(prefix, count)
        output_list.append(
            net.RecurrentNetworkBlobFetcher([op.output[-1]], [blob_name], prefix=prefix)
        )
    return output_list
