"""ReduceSum / ReduceMean over `axes` with `keepdims`; no gradient yet; device checks against the
CPU kernels."""
import unittest

import hypothesis.strategies as st
import numpy as np
import pytest
from hypothesis import given, settings

from caffe2.python import core
import caffe2.python.hypothesis_test_util as hu

from device_check import check_cpu_gpu, needs_gpu

COVERED_CUDA_OPS = ["ReduceSum", "ReduceMean"]

CPU = core.DeviceOption(0)

REFS = {"ReduceSum": np.sum, "ReduceMean": np.mean}


class TestReduce(hu.HypothesisTestCase):
    @given(
        op_type=st.sampled_from(sorted(REFS)),
        X=hu.tensor(min_dim=1, max_dim=4),
        keepdims=st.booleans(),
        data=st.data(),
    )
    @settings(deadline=None, max_examples=10)
    def test_reference(self, op_type, X, keepdims, data):
        axes = data.draw(st.lists(st.integers(0, X.ndim - 1), max_size=X.ndim, unique=True))
        op = core.CreateOperator(op_type, ["X"], ["Y"], axes=axes, keepdims=keepdims)
        ref_axes = tuple(axes) if axes else None
        self.assertReferenceChecks(
            CPU,
            op,
            [X],
            lambda X: [np.asarray(REFS[op_type](X, axis=ref_axes, keepdims=keepdims), np.float32)],
            threshold=1e-4,
            atol=1e-4,
        )

    def test_cases(self):
        X = np.random.RandomState(0).randn(2, 3, 4, 5).astype(np.float32)
        for op_type, fn in REFS.items():
            for axes, keepdims in [
                ([1], 1),
                ([0, 2], 0),
                ([3, 1], 1),
                ([-1], 0),
                ([], 0),
                ([1, 1], 1),
                ([0, 1, 2, 3], 1),
            ]:
                op = core.CreateOperator(op_type, ["X"], ["Y"], axes=axes, keepdims=keepdims)
                norm = tuple(sorted({a % 4 for a in axes})) if axes else None
                self.assertReferenceChecks(
                    CPU,
                    op,
                    [X],
                    lambda X: [np.asarray(fn(X, axis=norm, keepdims=bool(keepdims)), np.float32)],
                    threshold=1e-4,
                    atol=1e-5,
                )

    def test_default_keepdims_and_double(self):
        X = np.arange(6, dtype=np.float64).reshape(2, 3)
        op = core.CreateOperator("ReduceMean", ["X"], ["Y"], axes=[1])
        self.assertReferenceChecks(CPU, op, [X], lambda X: [X.mean(axis=1, keepdims=True)])

    def test_no_gradient(self):
        for op_type in REFS:
            op = core.CreateOperator(op_type, ["X"], ["Y"], axes=[0])
            with self.assertRaisesRegex(
                Exception, r"\[%s\] gradient is not implemented yet" % op_type
            ):
                core.GradientRegistry.GetGradientForOp(op, ["Y_grad"])

    def test_errors(self):
        op = core.CreateOperator("ReduceSum", ["X"], ["Y"], axes=[2])
        self.assertRunOpRaises(
            CPU,
            op,
            [np.zeros((2, 3), np.float32)],
            exception=RuntimeError,
            regexp=r"^\[ReduceSum\] axis 2 out of range for X \(2, 3\)",
        )
        op = core.CreateOperator("ReduceMean", ["X"], ["Y"])
        self.assertRunOpRaises(
            CPU,
            op,
            [np.zeros(3, np.int32)],
            exception=RuntimeError,
            regexp=r"^\[ReduceMean\] unsupported type int",
        )


R = np.random.RandomState(0)


@needs_gpu
@pytest.mark.parametrize("op_type", ["ReduceSum", "ReduceMean"])
@pytest.mark.parametrize(
    "axes,keepdims", [([], 1), ([0], 0), ([1, 2], 1), ([0, 2], 0), ([-1], 1), ([3, 1], 0)]
)
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_reduce_over_axes(op_type, axes, keepdims, dtype):
    x = R.randn(3, 4, 5, 6).astype(dtype)
    op = core.CreateOperator(op_type, ["x"], ["y"], axes=axes, keepdims=keepdims)
    check_cpu_gpu(op, [x], rtol=1e-5, atol=1e-5)


if __name__ == "__main__":
    unittest.main()
