"""Shape and Size: references, and no gradient. Their device checks are rows of test_op_table.py."""
import numpy as np
from hypothesis import given, settings

from caffe2.python import core
import caffe2.python.hypothesis_test_util as hu

CPU = core.DeviceOption(0)


class TestShapeSize(hu.HypothesisTestCase):
    @given(X=hu.tensor(min_dim=0, max_dim=4))
    @settings(deadline=None, max_examples=5)
    def test_shape_and_size(self, X):
        op = core.CreateOperator("Shape", ["X"], ["Y"])
        self.assertReferenceChecks(CPU, op, [X], lambda X: [np.array(X.shape, np.int64)])
        op = core.CreateOperator("Size", ["X"], ["Y"])
        self.assertReferenceChecks(CPU, op, [X], lambda X: [np.array(X.size, np.int64)])

    def test_shape_should_not_do_gradient(self):
        op = core.CreateOperator("Shape", ["X"], ["Y"])
        with self.assertRaisesRegex(Exception, "should not have a gradient"):
            core.GradientRegistry.GetGradientForOp(op, ["Y_grad"])
