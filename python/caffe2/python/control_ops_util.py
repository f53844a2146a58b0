"""Builds If and While control-flow ops out of plain subnets.

Each branch or loop body is wrapped in a `Do` op that runs it in a child
workspace. A blob of the subnet is *outer* when its name is in the lexical
scope (the outer blob names the subnet may see) or when the subnet reads it
before writing it; outer blobs are bound into the child workspace, so reads
see the outer values and writes are visible after the op. Every other blob of
the subnet is local to the child workspace and never reaches the outer one.

One workspace-stack blob per subnet is created with `CreateScope` in the
outer net, right before the `If` / `While` op that runs the `Do` nets.

No gradients are generated for these ops here (upstream's
`control_ops_grad` is not part of this package).
"""
from caffe2.python import core


def _names(blobs):
    return [str(b) for b in blobs]


def _refs(names):
    return [core.BlobReference(name=n, net=None) for n in names]


def get_external_blob_names(net, lexical_scope):
    """The outer blobs of `net` given the outer names it may see.

    Args:
      net: a core.Net (a subnet: branch, loop body or loop condition).
      lexical_scope: the outer blob names visible to the subnet.
    Returns:
      (input_names, output_names): the set of blobs the subnet reads before
      writing them (each must be in lexical_scope) and the set of blobs in
      lexical_scope that the subnet writes.
    """
    scope = set(_names(lexical_scope))
    net_proto = net.Proto()
    ssa, _ = core.get_ssa(net_proto)
    input_names = core.get_undefined_blobs(ssa)
    for name in input_names:
        assert str(name) in scope, "Input blob " + str(name) + " is undefined"

    output_names = set()
    for op in net_proto.op:
        for output in op.output:
            if str(output) in scope:
                output_names.add(str(output))
    return input_names, output_names


def _add_do_net(do_net_name, subnet, input_names, output_names, workspace_blob):
    """A net holding one Do op that runs `subnet` in a child workspace pushed
    on `workspace_blob`, with the outer blobs (inputs, then outputs) bound to
    the same names inside. Returns (do_net, do_inputs, do_outputs), the Do
    op's inputs and outputs including the workspace blob."""
    input_names = sorted(input_names)
    output_names = sorted(output_names)
    ordered = input_names + output_names
    inner_blobs = sorted(set(input_names) | set(output_names))
    outer_blobs_idx = [ordered.index(name) for name in inner_blobs]

    do_inputs = _refs(input_names) + [workspace_blob]
    do_outputs = _refs(output_names) + [workspace_blob]
    do_net = core.Net(do_net_name)
    do_net.Do(
        do_inputs,
        do_outputs,
        net=subnet.Proto(),
        inner_blobs=inner_blobs,
        outer_blobs_idx=outer_blobs_idx,
    )
    do_net.AddExternalOutput(*do_outputs)
    return do_net, do_inputs, do_outputs


def add_if_op(if_net, cond_blob, lexical_scope, then_net, else_net=None):
    """Appends to `if_net` an If op on `cond_blob` (a one-element bool blob)
    running `then_net`, or `else_net` when given and the condition is false.

    Blobs of then_net / else_net named in `lexical_scope`, and blobs they read
    before writing, are outer blobs: they must exist in the outer workspace,
    the branch reads their values and its writes are seen after the If. All
    other blobs are local to the branch's child workspace.
    """
    then_inputs, then_outputs = get_external_blob_names(then_net, lexical_scope)
    else_inputs, else_outputs = set(), set()
    if else_net is not None:
        else_inputs, else_outputs = get_external_blob_names(else_net, lexical_scope)

    if_inputs = [cond_blob] + _refs(sorted(then_inputs | else_inputs))
    if_outputs = _refs(sorted(then_outputs | else_outputs))

    # The net's name keeps the stack blobs of several If ops apart.
    then_ws = if_net.NextScopedBlob(if_net.Name() + "/workspace_if_then")
    do_then_net, _, _ = _add_do_net("do_then_net", then_net, then_inputs, then_outputs, then_ws)
    if_inputs.append(then_ws)
    if_outputs.append(then_ws)
    if_args = {"then_net": do_then_net.Proto()}

    else_ws = None
    if else_net is not None:
        else_ws = if_net.NextScopedBlob(if_net.Name() + "/workspace_if_else")
        do_else_net, _, _ = _add_do_net("do_else_net", else_net, else_inputs, else_outputs, else_ws)
        if_inputs.append(else_ws)
        if_outputs.append(else_ws)
        if_args["else_net"] = do_else_net.Proto()

    if_net.CreateScope([], [then_ws])
    if else_ws is not None:
        if_net.CreateScope([], [else_ws])
    if_net.If(if_inputs, if_outputs, **if_args)
    if_net.AddExternalOutput(*if_outputs)


def add_while_op(while_net, cond_blob, lexical_scope, loop_body_net, condition_body_net=None):
    """Appends to `while_net` a While op that runs `loop_body_net` while
    `cond_blob` (a one-element bool blob) is true.

    With `condition_body_net`, that net runs before every test of the
    condition and must write `cond_blob`; when `cond_blob` is not in
    `lexical_scope` it is first filled with False in `while_net`. Without it,
    the loop body has to update `cond_blob` itself. Outer and local blobs are
    told apart as in `add_if_op`.
    """
    body_inputs, body_outputs = get_external_blob_names(loop_body_net, lexical_scope)
    # The body may run zero times, so the blobs it writes are inputs as well.
    body_inputs = body_inputs | body_outputs

    while_inputs = [cond_blob] + _refs(sorted(body_inputs))
    while_outputs = _refs(sorted(body_outputs))

    body_ws = while_net.NextScopedBlob(while_net.Name() + "/workspace_loop_body")
    do_body_net, _, _ = _add_do_net(
        "do_loop_body_net", loop_body_net, body_inputs, body_outputs, body_ws
    )
    while_inputs.append(body_ws)
    while_outputs.append(body_ws)
    while_args = {"loop_net": do_body_net.Proto()}

    cond_ws = None
    if condition_body_net is not None:
        cond_inputs, cond_outputs = get_external_blob_names(condition_body_net, lexical_scope)
        writes_cond = any(
            str(cond_blob) in _names(op.output) for op in condition_body_net.Proto().op
        )
        assert writes_cond, "Condition net does not write into condition blob"
        # The condition blob is read by the While op, so it is always outer.
        cond_outputs.add(str(cond_blob))

        cond_ws = while_net.NextScopedBlob(while_net.Name() + "/workspace_loop_cond")
        do_cond_net, do_cond_inputs, do_cond_outputs = _add_do_net(
            "do_loop_condition_net", condition_body_net, cond_inputs, cond_outputs, cond_ws
        )
        while_args["cond_net"] = do_cond_net.Proto()
        while_inputs += [b for b in do_cond_inputs if str(b) not in body_inputs]
        while_outputs += [b for b in do_cond_outputs if str(b) not in body_outputs]

        if str(cond_blob) not in set(_names(lexical_scope)):
            while_net.ConstantFill([], cond_blob, dtype=core.DataType.BOOL, value=False)

    while_net.CreateScope([], [body_ws])
    if cond_ws is not None:
        while_net.CreateScope([], [cond_ws])
    while_net.While(while_inputs, while_outputs, **while_args)
    while_net.AddExternalOutput(*while_outputs)
