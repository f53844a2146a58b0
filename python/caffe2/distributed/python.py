"""caffe2.distributed.python: the distributed names of the extension module (ops spec §3.1).

StoreHandlerTimeoutError (a RuntimeError) is raised when a store wait or get (StoreGet, StoreWait,
a rendezvous) times out; its message names the keys that never arrived.
"""
from caffe2.python._import_c_extension import StoreHandlerTimeoutError  # noqa: F401

__all__ = ["StoreHandlerTimeoutError"]
