"""Serializing protos and naming nets and blobs for the extension: StringifyProto,
StringifyBlobName, StringifyNetName and GetNetName. Stateless helpers of caffe2.python.workspace,
which re-exports them.
"""
from google.protobuf.message import Message

from caffe2.proto import caffe2_pb2


def StringifyProto(obj):
    """Serializes a proto or an object with Proto(); passes strings through."""
    if isinstance(obj, (str, bytes)):
        return obj
    if isinstance(obj, Message):
        return obj.SerializeToString()
    if hasattr(obj, "Proto"):
        return obj.Proto().SerializeToString()
    raise ValueError("Unexpected argument to StringifyProto of type " + type(obj).__name__)


def _StringifyName(name, expected_type):
    if isinstance(name, (str, bytes)):
        return name
    assert type(name).__name__ == expected_type, "Expected a string or %s" % expected_type
    return str(name)


def StringifyBlobName(name):
    return _StringifyName(name, "BlobReference")


def StringifyNetName(name):
    return _StringifyName(name, "Net")


def GetNetName(net):
    """The name of a net given as a name, a Net, a NetDef or a serialized NetDef (bytes)."""
    if isinstance(net, str):
        return net
    if isinstance(net, bytes):
        # A serialized NetDef (RunNetOnce(open('init_net.pb', 'rb').read())), or a name as bytes.
        try:
            return caffe2_pb2.NetDef.FromString(net).name or "(unnamed net)"
        except Exception:
            return net.decode("utf-8", errors="replace")
    if type(net).__name__ == "Net":
        return net.Name()
    if isinstance(net, caffe2_pb2.NetDef):
        return net.name
    raise TypeError(
        (
            "Expected a net: a Net, a NetDef, a serialized NetDef (bytes) or a net name, "
            "got {}{}"
        ).format(
            type(net).__name__,
            " (use RunOperatorOnce for an operator)"
            if isinstance(net, caffe2_pb2.OperatorDef)
            else "",
        )
    )
