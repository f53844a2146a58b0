"""SigmoidGradient: shape mismatch of Y and dY. The checks shared by every unary op are in
test_unary_ops.py."""
import numpy as np

from caffe2.python import core
import caffe2.python.hypothesis_test_util as hu

CPU = core.DeviceOption(0)


class TestErrors(hu.HypothesisTestCase):
    def test_gradient_shape_mismatch(self):
        op = core.CreateOperator("SigmoidGradient", ["Y", "dY"], ["dX"])
        self.assertRunOpRaises(
            CPU,
            op,
            [np.ones(3, np.float32), np.ones(4, np.float32)],
            exception=RuntimeError,
            regexp=r"^\[SigmoidGradient\] input 0 \(3,\) and dY \(4,\) must have "
            r"the same shape",
        )
