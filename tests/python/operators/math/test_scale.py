"""Scale: the float typing of its argument. The checks shared by every unary op are in
test_unary_ops.py."""
import numpy as np

from caffe2.python import core
import caffe2.python.hypothesis_test_util as hu

CPU = core.DeviceOption(0)


class TestErrors(hu.HypothesisTestCase):
    def test_float_argument_typing(self):
        op = core.CreateOperator("Scale", ["X"], ["Y"], scale=2)
        self.assertRunOpRaises(
            CPU, op, [np.ones(3, np.float32)], exception=RuntimeError, regexp=r"scale"
        )
