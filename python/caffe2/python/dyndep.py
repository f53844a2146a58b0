"""Loads shared libraries that register extra operators."""
import ctypes
import os
import threading

from caffe2.python import core, extension_loader

_IMPORTED_DYNDEPS = set()
dll_lock = threading.Lock()


def InitOpsLibrary(name):
    """Loads the operator library at path `name`.

    A path that does not exist (e.g. an upstream build target such as
    "@/caffe2/caffe2/distributed:file_store_handler_ops") is skipped with a
    message, so scripts written for upstream keep running.
    """
    if not os.path.exists(name):
        print("Ignoring {} as it is not a valid file.".format(name))
        return
    _init_impl(name)


def GetImportedOpsLibraries():
    return _IMPORTED_DYNDEPS


def _init_impl(path):
    with dll_lock:
        _IMPORTED_DYNDEPS.add(path)
        with extension_loader.DlopenGuard():
            ctypes.CDLL(path)
        # The library registered new operators.
        core.RefreshRegisteredOperators()
