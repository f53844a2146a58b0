"""Relu and ReluGradient: the gradient of an output overwritten in place. The reference, gradient
and device checks shared by every unary op are in test_unary_ops.py."""
import numpy as np

from caffe2.python import core
import caffe2.python.hypothesis_test_util as hu

CPU = core.DeviceOption(0)


def away_from(x, points, margin=0.1):
    """Moves elements within `margin` of a kink (where finite differences fail) away from it."""
    x = x.copy()
    for p in points:
        near = np.abs(x - p) < margin
        x[near] = p + margin * np.where(x[near] >= p, 2, -2)
    return x


class TestUnary(hu.HypothesisTestCase):
    def test_gradient_of_output_overwritten_by_relu(self):
        X = away_from(np.random.RandomState(2).randn(4, 3).astype(np.float32), [0.0])
        op = core.CreateOperator("ReluGradient", ["Y", "dY"], ["dY"])
        dY = np.random.RandomState(3).randn(4, 3).astype(np.float32)
        self.assertReferenceChecks(
            CPU, op, [np.maximum(X, 0), dY], lambda Y, dY: [np.where(Y > 0, dY, 0)]
        )
