"""MaxGradient: ties give every maximum the gradient. The checks Max and Min share with Mean are in
test_elementwise_ops.py."""
import numpy as np

from caffe2.python import core
import caffe2.python.hypothesis_test_util as hu

CPU = core.DeviceOption(0)


class TestMeanMinMax(hu.HypothesisTestCase):
    def test_ties_give_every_maximum_the_gradient(self):
        A = np.array([1.0, 2.0], np.float32)
        B = np.array([1.0, 0.0], np.float32)
        op = core.CreateOperator("MaxGradient", ["Y", "dY", "A", "B"], ["dA", "dB"])
        self.assertReferenceChecks(
            CPU,
            op,
            [np.maximum(A, B), np.array([5.0, 6.0], np.float32), A, B],
            lambda Y, dY, A, B: [np.array([5.0, 6.0]), np.array([5.0, 0.0])],
        )
