"""Graph transforms of inference nets, applied with workspace.ApplyTransform(name, net) and
workspace.ApplyTransformIfFaster(name, net, init_net).

A transform takes a NetDef and returns a new one (the argument is left as it was). The
registered names:

- "FoldSpatialBNIntoConv": a Conv whose output only a SpatialBN in test mode reads becomes one
  Conv whose filter and bias fold the normalization in:
      a = scale / sqrt(var + epsilon),  W' = W * a (per output channel),  b' = (b - mean) * a + bias
  The values are read from the current workspace (run the init net, or load the weights, first);
  W' and b' are written to it as `<filter>_bnfold` and `<filter>_bnfold_b`, leaving the original
  blobs, and so the original net, as they were.
- "FuseConvRelu": a Conv whose output only a Relu reads becomes a ConvRelu (the DNNL engine fuses
  the relu into the convolution).
- "KeepDnnlBlockedLayout": the CPU convolutions pass their activations on in oneDNN's blocked
  layout, with residual Sums and Relus fused in (caffe2.python.net_transforms_dnnl; oneDNN
  builds only).
- "OptimizeForInference": all three, in that order (the last one when the build has oneDNN).

Only ops of CPU nets are rewritten (a CUDA device option leaves an op alone), and only where the
intermediate blob is neither read by another op nor an external output of the net. No transform
applies to a net that is to be trained: ConvRelu has no gradient.
"""
import numpy as np

from caffe2.proto import caffe2_pb2

_TRANSFORMS = {}
_CONV_TYPES = ("Conv", "Conv1D", "Conv2D", "Conv3D")


def register_transform(name):
    def decorate(fn):
        _TRANSFORMS[name] = fn
        return fn

    return decorate


def registered_transforms():
    return sorted(_TRANSFORMS)


def apply_transform(name, net):
    """The NetDef `net` (a NetDef or its serialized bytes) transformed by the transform `name`."""
    if name not in _TRANSFORMS:
        raise RuntimeError(
            "unknown transform {!r}; registered: {}".format(
                name, ", ".join(registered_transforms())
            )
        )
    proto = caffe2_pb2.NetDef()
    if isinstance(net, bytes):
        proto.ParseFromString(net)
    else:
        proto.CopyFrom(net)
    return _TRANSFORMS[name](proto)


def _on_cpu(op, net):
    option = op.device_option if op.HasField("device_option") else net.device_option
    return option.device_type == caffe2_pb2.CPU


def _arg(op, name, default):
    for a in op.arg:
        if a.name == name:
            return a.f if a.HasField("f") else a.i
    return default


def _fusable_pairs(net, first_types, second_type):
    """(i, j) for each op i of first_types whose output 0 is read by op j (of second_type, as its
    input 0) and by no other op before the blob is written again, with i and j on the CPU and the
    blob's value at i not an external output of the net."""
    external = set(net.external_output)
    pairs = []
    for i, op in enumerate(net.op):
        if op.type not in first_types or len(op.output) != 1 or not _on_cpu(op, net):
            continue
        out = op.output[0]
        users, rewritten = [], False
        for k in range(i + 1, len(net.op)):
            if out in net.op[k].input:
                users.append(k)
            if out in net.op[k].output:
                rewritten = True
                break
        if len(users) != 1 or (out in external and not rewritten):
            continue
        j = users[0]
        second = net.op[j]
        if second.type == second_type and second.input[0] == out and _on_cpu(second, net):
            pairs.append((i, j))
    return pairs


def _rebuild(net, replaced, removed, new_inputs=()):
    out = caffe2_pb2.NetDef()
    out.CopyFrom(net)
    out.external_input.extend(new_inputs)
    del out.op[:]
    for k, op in enumerate(net.op):
        if k in removed:
            continue
        out.op.extend([replaced.get(k, op)])
    return out


def _fetch(name, transform):
    from caffe2.python import workspace

    if not workspace.HasBlob(name):
        raise RuntimeError(
            "{}: blob {!r} is not in the workspace; run the init net (or load the weights) "
            "before applying the transform".format(transform, name)
        )
    return workspace.FetchBlob(name).astype(np.float64)


@register_transform("FoldSpatialBNIntoConv")
def fold_spatial_bn_into_conv(net):
    from caffe2.python import workspace

    replaced, removed, new_inputs = {}, set(), []
    for i, j in _fusable_pairs(net, _CONV_TYPES, "SpatialBN"):
        conv, bn = net.op[i], net.op[j]
        if not _arg(bn, "is_test", 0) or len(bn.output) != 1:
            continue
        name = "FoldSpatialBNIntoConv"
        W = _fetch(conv.input[1], name)
        b = _fetch(conv.input[2], name) if len(conv.input) > 2 else np.zeros(W.shape[0])
        scale, shift, mean, var = (_fetch(bn.input[k], name) for k in range(1, 5))
        a = scale / np.sqrt(var + _arg(bn, "epsilon", 1e-5))
        folded_w = conv.input[1] + "_bnfold"
        folded_b = conv.input[1] + "_bnfold_b"
        workspace.FeedBlob(
            folded_w, (W * a.reshape((-1,) + (1,) * (W.ndim - 1))).astype(np.float32)
        )
        workspace.FeedBlob(folded_b, ((b - mean) * a + shift).astype(np.float32))
        fused = caffe2_pb2.OperatorDef()
        fused.CopyFrom(conv)
        del fused.input[1:]
        fused.input.extend([folded_w, folded_b])
        fused.output[0] = bn.output[0]
        replaced[i] = fused
        removed.add(j)
        new_inputs += [folded_w, folded_b]
    return _rebuild(net, replaced, removed, new_inputs)


@register_transform("FuseConvRelu")
def fuse_conv_relu(net):
    replaced, removed = {}, set()
    for i, j in _fusable_pairs(net, _CONV_TYPES, "Relu"):
        conv, relu = net.op[i], net.op[j]
        fused = caffe2_pb2.OperatorDef()
        fused.CopyFrom(conv)
        fused.type = "ConvRelu"
        fused.output[0] = relu.output[0]
        replaced[i] = fused
        removed.add(j)
    return _rebuild(net, replaced, removed)


def _has_dnnl_blocked_ops():
    from caffe2.python import workspace

    return "DnnlBlockedConv" in workspace.C.registered_operators()


@register_transform("KeepDnnlBlockedLayout")
def keep_dnnl_blocked_layout(net):
    from caffe2.python.net_transforms_dnnl import keep_dnnl_blocked_layout as keep

    if not _has_dnnl_blocked_ops():
        raise RuntimeError("KeepDnnlBlockedLayout needs a build with oneDNN (DnnlBlockedConv)")
    return keep(net)


@register_transform("OptimizeForInference")
def optimize_for_inference(net):
    net = fuse_conv_relu(fold_spatial_bn_into_conv(net))
    return keep_dnnl_blocked_layout(net) if _has_dnnl_blocked_ops() else net
