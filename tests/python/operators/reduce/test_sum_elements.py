"""SumElements (with SumElementsGradient) and SumSqrElements: 0-d outputs, `average`, errors."""
import unittest

import hypothesis.strategies as st
import numpy as np
from hypothesis import given, settings

from caffe2.python import core
import caffe2.python.hypothesis_test_util as hu

CPU = core.DeviceOption(0)


class TestSumElements(hu.HypothesisTestCase):
    @given(X=hu.tensor(min_dim=1, max_dim=3), average=st.booleans())
    @settings(deadline=None, max_examples=10)
    def test_reference_and_gradient(self, X, average):
        op = core.CreateOperator("SumElements", ["X"], ["Y"], average=average)
        ref = X.mean() if average else X.sum()
        self.assertReferenceChecks(CPU, op, [X], lambda X: [np.array(ref, np.float32)],
                                   threshold=1e-3)
        self.assertGradientChecks(CPU, op, [X], 0, [0])

    def test_long_sums_stay_accurate(self):
        X = np.random.RandomState(0).rand(300001).astype(np.float32)
        for op_type, ref in [("SumElements", X.astype(np.float64).sum()),
                             ("SumSqrElements", (X.astype(np.float64) ** 2).sum())]:
            op = core.CreateOperator(op_type, ["X"], ["Y"])
            self.assertReferenceChecks(CPU, op, [X], lambda X: [np.array(ref, np.float32)],
                                       threshold=1e-6, atol=0)

    def test_gradient_op(self):
        op = core.CreateOperator("SumElements", ["X"], ["Y"], average=True)
        ops, _ = core.GradientRegistry.GetGradientForOp(op, ["Y_grad"])
        self.assertEqual([(o.type, list(o.input), list(o.output)) for o in ops],
                         [("SumElementsGradient", ["X", "Y_grad"], ["X_grad"])])
        self.assertEqual([(a.name, a.i) for a in ops[0].arg], [("average", 1)])

    def test_errors(self):
        op = core.CreateOperator("SumElements", ["X"], ["Y"])
        self.assertRunOpRaises(CPU, op, [np.zeros(3, np.int32)], exception=RuntimeError,
                               regexp=r"^\[SumElements\] unsupported type int \(supported: float\)")
        op = core.CreateOperator("SumElements", ["X"], ["Y"], average=True)
        self.assertRunOpRaises(CPU, op, [np.zeros((0, 3), np.float32)], exception=RuntimeError,
                               regexp=r"^\[SumElements\] cannot average an empty tensor \(0, 3\)")


class TestSumSqrElements(hu.HypothesisTestCase):
    @given(X=hu.tensor(min_dim=1, max_dim=3), average=st.booleans())
    @settings(deadline=None, max_examples=10)
    def test_reference(self, X, average):
        op = core.CreateOperator("SumSqrElements", ["X"], ["Y"], average=average)
        ref = (X.astype(np.float64) ** 2).mean() if average else (X.astype(np.float64) ** 2).sum()
        self.assertReferenceChecks(CPU, op, [X], lambda X: [np.array(ref, np.float32)],
                                   threshold=1e-4)

    def test_double_and_errors(self):
        X = np.arange(4, dtype=np.float64)
        self.assertReferenceChecks(CPU, core.CreateOperator("SumSqrElements", ["X"], ["Y"]), [X],
                                   lambda X: [np.array(14.0)])
        self.assertRunOpRaises(CPU, core.CreateOperator("SumSqrElements", ["X"], ["Y"]),
                               [np.zeros(3, np.int64)], exception=RuntimeError,
                               regexp=r"^\[SumSqrElements\] unsupported type long")

    def test_no_gradient_registered(self):
        op = core.CreateOperator("SumSqrElements", ["X"], ["Y"])
        with self.assertRaises(Exception):
            core.GradientRegistry.GetGradientForOp(op, ["Y_grad"])


if __name__ == "__main__":
    unittest.main()
