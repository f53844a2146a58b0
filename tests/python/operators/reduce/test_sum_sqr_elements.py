"""SumSqrElements: reference, `average`, double input, errors, no gradient; device checks against
the CPU kernel."""
import unittest

import hypothesis.strategies as st
import numpy as np
import pytest
from hypothesis import given, settings

from caffe2.python import core
import caffe2.python.hypothesis_test_util as hu

from device_check import check_cpu_gpu, needs_gpu

COVERED_CUDA_OPS = ["SumSqrElements"]

CPU = core.DeviceOption(0)


class TestSumSqrElements(hu.HypothesisTestCase):
    @given(X=hu.tensor(min_dim=1, max_dim=3), average=st.booleans())
    @settings(deadline=None, max_examples=10)
    def test_reference(self, X, average):
        op = core.CreateOperator("SumSqrElements", ["X"], ["Y"], average=average)
        ref = (X.astype(np.float64) ** 2).mean() if average else (X.astype(np.float64) ** 2).sum()
        self.assertReferenceChecks(
            CPU, op, [X], lambda X: [np.array(ref, np.float32)], threshold=1e-4
        )

    def test_double_and_errors(self):
        X = np.arange(4, dtype=np.float64)
        self.assertReferenceChecks(
            CPU,
            core.CreateOperator("SumSqrElements", ["X"], ["Y"]),
            [X],
            lambda X: [np.array(14.0)],
        )
        self.assertRunOpRaises(
            CPU,
            core.CreateOperator("SumSqrElements", ["X"], ["Y"]),
            [np.zeros(3, np.int64)],
            exception=RuntimeError,
            regexp=r"^\[SumSqrElements\] unsupported type long",
        )

    def test_no_gradient_registered(self):
        op = core.CreateOperator("SumSqrElements", ["X"], ["Y"])
        with self.assertRaises(Exception):
            core.GradientRegistry.GetGradientForOp(op, ["Y_grad"])


R = np.random.RandomState(0)


@needs_gpu
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("average", [False, True])
def test_sum_sqr_elements(dtype, average):
    x = R.randn(5000).astype(dtype)
    check_cpu_gpu(
        core.CreateOperator("SumSqrElements", ["x"], ["y"], average=average),
        [x],
        rtol=1e-6,
        atol=1e-6,
    )


if __name__ == "__main__":
    unittest.main()
