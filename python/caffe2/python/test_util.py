"""Base class and helpers for tests of caffe2 code."""
import unittest

import numpy as np

from caffe2.python import core, workspace


def rand_array(*dims):
    """A float32 array of the given dims, uniform in [-0.5, 0.5)."""
    # np.array() so that no dims still gives an array, not a Python float.
    return np.array(np.random.rand(*dims) - 0.5).astype(np.float32)


def numOps(net):
    """Number of ops of a Net or NetDef."""
    proto = net.Proto() if hasattr(net, "Proto") else net
    return len(proto.op)


def str_compare(a, b, encoding="utf8"):
    """Compares str/bytes values, decoding bytes with `encoding`."""
    if isinstance(a, bytes):
        a = a.decode(encoding)
    if isinstance(b, bytes):
        b = b.decode(encoding)
    return a == b


class TestCase(unittest.TestCase):
    """Initializes the runtime once, and resets the workspace per test."""

    @classmethod
    def setUpClass(cls):
        workspace.GlobalInit(["caffe2", "--caffe2_log_level=0"])
        # Engine preferences would change which kernels op tests exercise.
        core.SetEnginePref({}, {})

    def setUp(self):
        self.ws = workspace.C.Workspace()
        workspace.ResetWorkspace()

    def tearDown(self):
        workspace.ResetWorkspace()
