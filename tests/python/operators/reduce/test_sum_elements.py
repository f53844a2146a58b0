"""SumElements (with SumElementsGradient): 0-d outputs, `average`, long sums (beside
SumSqrElements'), errors; SumElementsInt (int32 wrap-around, no gradient); device checks against
the CPU kernel."""
import unittest

import hypothesis.strategies as st
import numpy as np
import pytest
from hypothesis import given, settings

from caffe2.python import core, workspace
import caffe2.python.hypothesis_test_util as hu

from device_check import check_cpu_gpu, check_gradient_cpu_gpu, needs_gpu

COVERED_CUDA_OPS = ["SumElements", "SumElementsGradient", "SumElementsInt"]

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


class TestSumElementsInt(hu.HypothesisTestCase):
    @given(X=hu.tensor(dtype=np.int32, elements=st.integers(-1000, 1000)))
    @settings(deadline=None, max_examples=10)
    def test_reference(self, X):
        op = core.CreateOperator("SumElementsInt", ["X"], ["Y"])
        self.assertReferenceChecks(CPU, op, [X], lambda X: [np.array(X.sum(), np.int32)])

    def test_wraps_as_int32_and_has_no_gradient(self):
        workspace.ResetWorkspace()
        workspace.FeedBlob("X", np.array([2**31 - 1, 1], np.int32))
        op = core.CreateOperator("SumElementsInt", ["X"], ["Y"])
        workspace.RunOperatorOnce(op)
        y = workspace.FetchBlob("Y")
        assert y.shape == () and y.dtype == np.int32 and y == -(2**31)
        with pytest.raises(Exception, match="SumElementsInt"):
            core.GradientRegistry.GetGradientForOp(op, ["Y_grad"])

    def test_a_float_input_is_refused(self):
        workspace.ResetWorkspace()
        workspace.FeedBlob("X", np.ones(3, np.float32))
        with pytest.raises(RuntimeError, match=r"unsupported type float \(supported: int\)"):
            workspace.RunOperatorOnce(core.CreateOperator("SumElementsInt", ["X"], ["Y"]))


@needs_gpu
def test_sum_elements_int_device_check():
    X = np.arange(-5, 7, dtype=np.int32).reshape(3, 4)
    check_cpu_gpu(core.CreateOperator("SumElementsInt", ["X"], ["Y"]), [X])
