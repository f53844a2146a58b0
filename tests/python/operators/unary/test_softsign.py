"""Softsign and SoftsignGradient: no gradient in place, and a gradient op that refuses to run in
place. The checks shared by every unary op are in test_unary_ops.py."""
import unittest

import numpy as np

from caffe2.python import core
import caffe2.python.hypothesis_test_util as hu

CPU = core.DeviceOption(0)


class TestGradientOps(unittest.TestCase):
    def grad(self, op_type, out="Y", **kwargs):
        op = core.CreateOperator(op_type, ["X"], [out], **kwargs)
        ops, _ = core.GradientRegistry.GetGradientForOp(op, [out + "_grad"])
        return [(o.type, list(o.input), list(o.output)) for o in ops], ops

    def test_softsign_in_place_has_no_gradient(self):
        with self.assertRaisesRegex(Exception, r"\[Softsign\] no gradient for in-place Softsign"):
            self.grad("Softsign", out="X")


class TestErrors(hu.HypothesisTestCase):
    def test_softsign_gradient_not_in_place(self):
        op = core.CreateOperator("SoftsignGradient", ["X", "dY"], ["dY"])
        self.assertRunOpRaises(
            CPU,
            op,
            [np.ones(3, np.float32)] * 2,
            exception=RuntimeError,
            regexp=r"^\[SoftsignGradient\] input 1 and output 0 are both .dY., "
            r"but this op cannot run in place",
        )
