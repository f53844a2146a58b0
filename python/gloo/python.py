"""gloo.python: IoError, raised when a Gloo collective or rendezvous fails on the wire (a peer died,
a connection broke, a peer did not answer within the timeout). It is a RuntimeError; its message
names the op, this rank and the ranks that are gone."""
from caffe2.python._import_c_extension import IoError  # noqa: F401

__all__ = ["IoError"]
