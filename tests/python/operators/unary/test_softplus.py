"""Softplus: stability for large inputs. The checks shared by every unary op are in
test_unary_ops.py."""
import numpy as np

from caffe2.python import core
import caffe2.python.hypothesis_test_util as hu

CPU = core.DeviceOption(0)


class TestUnary(hu.HypothesisTestCase):
    def test_softplus_is_stable_for_large_inputs(self):
        X = np.array([-100.0, -20.0, 0.0, 20.0, 100.0], dtype=np.float32)
        self.assertReferenceChecks(
            CPU,
            core.CreateOperator("Softplus", ["X"], ["Y"]),
            [X],
            lambda X: [np.logaddexp(0, X).astype(np.float32)],
        )
