"""The KeepDnnlBlockedLayout transform (registered in caffe2.python.net_transforms): the CPU
convolutions of an inference net pass their activations on in the layout oneDNN picks, instead of
reordering to and from NCHW around each one.

- Every NCHW Conv / ConvRelu on the CPU that reads or feeds another becomes a DnnlBlockedConv
  (relu=1 for ConvRelu); a lone one stays as it is. A Conv
  whose output only a two-input Sum reads becomes one DnnlBlockedConv at the Sum's place with the
  Sum's other input as its summand (a oneDNN post-op), and a Relu that alone reads the Sum's output
  joins it (relu=1): a residual block's Sum and Relu cost no pass of their own.
- A DnnlBlockedConv reads and writes blocked tensors named `<blob>_dnnl`. DnnlToBlocked is put
  before the first one that reads a plain blob, and DnnlToPlain before any other op that reads a
  convolution's output and at the end for the net's external outputs. An activation inside a
  chain that nothing else reads exists only as `<blob>_dnnl` (not a Tensor): fetch it by making
  it an external output of the net first.
"""
from caffe2.proto import caffe2_pb2

_CONV_TYPES = ("Conv", "Conv2D", "ConvRelu")
_SUFFIX = "_dnnl"


def _arg(op, name):
    for a in op.arg:
        if a.name == name:
            return a
    return None


def _on_cpu(op, net):
    option = op.device_option if op.HasField("device_option") else net.device_option
    return option.device_type == caffe2_pb2.CPU


def _is_candidate(op, net):
    if op.type not in _CONV_TYPES or len(op.output) != 1 or not _on_cpu(op, net):
        return False
    order = _arg(op, "order")
    if order is not None and order.s not in (b"NCHW", "NCHW"):
        return False
    kernels = _arg(op, "kernels")
    if kernels is not None and len(kernels.ints) != 2:
        return False
    return op.engine in ("", "DNNL", "CUDNN", "EIGEN")


def _readers_until_rewritten(ops, start, name):
    """The ops after `start` that read `name` before it is written again, and whether it is."""
    readers = []
    for k in range(start + 1, len(ops)):
        if name in ops[k].input:
            readers.append(k)
        if name in ops[k].output:
            return readers, True
    return readers, False


def _blocked_conv(conv, output, relu, summand=None):
    op = caffe2_pb2.OperatorDef()
    op.CopyFrom(conv)
    op.type = "DnnlBlockedConv"
    op.engine = ""
    del op.output[:]
    op.output.append(output)
    if summand is not None:
        op.input.append(summand)
        op.arg.add(name="summand", i=1)
    if relu:
        op.arg.add(name="relu", i=1)
    return op


def _fuse_residuals(net, ops):
    """Moves each Conv that only a Sum reads to the Sum's place, with the summand (and the Relu
    that alone reads the Sum's output) fused in; returns the new op list."""
    external = set(net.external_output)
    placed, removed = {}, set()
    for k, op in enumerate(ops):
        if op.type != "Sum" or len(op.input) != 2 or not _on_cpu(op, net):
            continue
        for side in (0, 1):
            conv_out, summand = op.input[side], op.input[1 - side]
            producers = [i for i in range(k) if conv_out in ops[i].output and i not in removed]
            if not producers or conv_out == summand:
                continue
            i = producers[-1]
            conv = ops[i]
            if conv.type == "ConvRelu" or not _is_candidate(conv, net) or i in placed:
                continue
            readers, rewritten = _readers_until_rewritten(ops, i, conv_out)
            if readers != [k] or (conv_out in external and not rewritten):
                continue
            if any(set(conv.input) & set(ops[m].output) for m in range(i + 1, k)):
                continue  # an input of the conv changes before the Sum
            out, relu = op.output[0], False
            after, after_rewritten = _readers_until_rewritten(ops, k, out)
            if (
                len(after) == 1
                and ops[after[0]].type == "Relu"
                and ops[after[0]].input[0] == out
                and _on_cpu(ops[after[0]], net)
                and (out not in external or after_rewritten)
            ):
                relu_op = ops[after[0]]
                out, relu = relu_op.output[0], True
                removed.add(after[0])
            placed[k] = _blocked_conv(conv, out, relu, summand)
            removed.add(i)
            break
    return [placed.get(k, op) for k, op in enumerate(ops) if k not in removed]


def _isolated(ops, k):
    """Whether DnnlBlockedConv k neither reads a blocked convolution's output nor has its own
    read by one: in blocked layout it would only add two reorders."""
    reads = [ops[k].input[0]] + ([ops[k].input[-1]] if _arg(ops[k], "summand") else [])
    for name in reads:
        producers = [i for i in range(k) if name in ops[i].output]
        if producers and ops[producers[-1]].type == "DnnlBlockedConv":
            return False
    out = ops[k].output[0]
    for j in _readers_until_rewritten(ops, k, out)[0]:
        if ops[j].type == "DnnlBlockedConv":
            return False
    return True


def keep_dnnl_blocked_layout(net):
    ops = _fuse_residuals(net, list(net.op))
    originals = {}
    for k, op in enumerate(ops):
        if _is_candidate(op, net):
            originals[k] = op
            ops[k] = _blocked_conv(op, op.output[0], op.type == "ConvRelu")
    for k, op in originals.items():  # a lone convolution keeps the DNNL engine's own layouts
        if _isolated(ops, k):
            ops[k] = op
    blocked, stale, out_ops = {}, set(), []

    def convert(op_type, source, target):
        op = caffe2_pb2.OperatorDef()
        op.type = op_type
        op.input.append(source)
        op.output.append(target)
        out_ops.append(op)

    for op in ops:
        if op.type == "DnnlBlockedConv":
            reads = [0] + ([len(op.input) - 1] if _arg(op, "summand") else [])
            for idx in reads:
                name = op.input[idx]
                if name not in blocked:
                    convert("DnnlToBlocked", name, name + _SUFFIX)
                    blocked[name] = name + _SUFFIX
                op.input[idx] = blocked[name]
            out = op.output[0]
            op.output[0] = out + _SUFFIX
            out_ops.append(op)
            blocked[out] = out + _SUFFIX
            stale.add(out)
            continue
        for name in op.input:
            if name in stale:
                convert("DnnlToPlain", blocked[name], name)
                stale.discard(name)
        out_ops.append(op)
        for name in op.output:
            blocked.pop(name, None)
            stale.discard(name)
    for name in net.external_output:
        if name in stale:
            convert("DnnlToPlain", blocked[name], name)
    result = caffe2_pb2.NetDef()
    result.CopyFrom(net)
    del result.op[:]
    result.op.extend(out_ops)
    return result
