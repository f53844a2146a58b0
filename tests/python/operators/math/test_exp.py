"""Exp: an unsupported input type. The checks shared by every unary op are in test_unary_ops.py."""
import numpy as np

from caffe2.python import core
import caffe2.python.hypothesis_test_util as hu

CPU = core.DeviceOption(0)


class TestErrors(hu.HypothesisTestCase):
    def test_unsupported_dtype(self):
        op = core.CreateOperator("Exp", ["X"], ["Y"])
        self.assertRunOpRaises(
            CPU,
            op,
            [np.ones(3, np.int32)],
            exception=RuntimeError,
            regexp=r"^\[Exp\] unsupported type int for X \(supported: float, double\)",
        )
