"""SumElements (with SumElementsGradient): 0-d outputs, `average`, long sums (beside
SumSqrElements'), errors; device checks against the CPU kernel."""
import unittest

import hypothesis.strategies as st
import numpy as np
import pytest
from hypothesis import given, settings

from caffe2.python import core
import caffe2.python.hypothesis_test_util as hu

from device_check import check_cpu_gpu, check_gradient_cpu_gpu, needs_gpu

COVERED_CUDA_OPS = ["SumElements", "SumElementsGradient"]

CPU = core.DeviceOption(0)


class TestSumElements(hu.HypothesisTestCase):
    @given(X=hu.tensor(min_dim=1, max_dim=3), average=st.booleans())
    @settings(deadline=None, max_examples=10)
    def test_reference_and_gradient(self, X, average):
        op = core.CreateOperator("SumElements", ["X"], ["Y"], average=average)
        ref = X.mean() if average else X.sum()
        self.assertReferenceChecks(
            CPU, op, [X], lambda X: [np.array(ref, np.float32)], threshold=1e-3
        )
        self.assertGradientChecks(CPU, op, [X], 0, [0])

    def test_long_sums_stay_accurate(self):
        X = np.random.RandomState(0).rand(300001).astype(np.float32)
        for op_type, ref in [
            ("SumElements", X.astype(np.float64).sum()),
            ("SumSqrElements", (X.astype(np.float64) ** 2).sum()),
        ]:
            op = core.CreateOperator(op_type, ["X"], ["Y"])
            self.assertReferenceChecks(
                CPU, op, [X], lambda X: [np.array(ref, np.float32)], threshold=1e-6, atol=0
            )

    def test_gradient_op(self):
        op = core.CreateOperator("SumElements", ["X"], ["Y"], average=True)
        ops, _ = core.GradientRegistry.GetGradientForOp(op, ["Y_grad"])
        self.assertEqual(
            [(o.type, list(o.input), list(o.output)) for o in ops],
            [("SumElementsGradient", ["X", "Y_grad"], ["X_grad"])],
        )
        self.assertEqual([(a.name, a.i) for a in ops[0].arg], [("average", 1)])

    def test_errors(self):
        op = core.CreateOperator("SumElements", ["X"], ["Y"])
        self.assertRunOpRaises(
            CPU,
            op,
            [np.zeros(3, np.int32)],
            exception=RuntimeError,
            regexp=r"^\[SumElements\] unsupported type int \(supported: float\)",
        )
        op = core.CreateOperator("SumElements", ["X"], ["Y"], average=True)
        self.assertRunOpRaises(
            CPU,
            op,
            [np.zeros((0, 3), np.float32)],
            exception=RuntimeError,
            regexp=r"^\[SumElements\] cannot average an empty tensor \(0, 3\)",
        )


R = np.random.RandomState(0)


@needs_gpu
@pytest.mark.parametrize("n,average", [(1, False), (1000, True), (3 * 10**6, False)])
def test_sum_elements(n, average):
    x = R.randn(n).astype(np.float32)
    op = core.CreateOperator("SumElements", ["x"], ["y"], average=average)
    check_cpu_gpu(op, [x], rtol=1e-5, atol=1e-4)
    if n <= 1000:
        check_gradient_cpu_gpu(op, [x], rtol=1e-5, atol=1e-6)


if __name__ == "__main__":
    unittest.main()
