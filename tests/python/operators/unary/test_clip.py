"""Clip: the default bounds and min above max. The checks shared by every unary op are in
test_unary_ops.py."""
import numpy as np

from caffe2.python import core
import caffe2.python.hypothesis_test_util as hu

CPU = core.DeviceOption(0)


class TestUnary(hu.HypothesisTestCase):
    def test_clip_defaults_do_nothing(self):
        X = np.array([-1e30, 0.0, 1e30], dtype=np.float32)
        self.assertReferenceChecks(
            CPU, core.CreateOperator("Clip", ["X"], ["Y"]), [X], lambda X: [X]
        )


class TestErrors(hu.HypothesisTestCase):
    def test_clip_min_above_max(self):
        op = core.CreateOperator("Clip", ["X"], ["Y"], min=1.0, max=0.0)
        self.assertRunOpRaises(
            CPU,
            op,
            [np.ones(3, np.float32)],
            exception=RuntimeError,
            regexp=r"^\[Clip\] min 1 is greater than max 0",
        )
