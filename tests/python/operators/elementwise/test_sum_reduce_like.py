"""SumReduceLike: A summed down to B's shape under the legacy broadcast rules; device checks over
element types against the CPU kernel."""
import unittest

import numpy as np
import pytest

from caffe2.python import core
import caffe2.python.hypothesis_test_util as hu

from device_check import check_cpu_gpu, needs_gpu

COVERED_CUDA_OPS = ["SumReduceLike"]

CPU = core.DeviceOption(0)


def reduce_like(A, B, axis=None):
    if B.size == 1:
        return A.sum().reshape(B.shape).astype(A.dtype)
    if axis is None:
        axis = A.ndim - B.ndim
    shape = (1,) * axis + B.shape + (1,) * (A.ndim - axis - B.ndim)
    keep = tuple(i for i, d in enumerate(shape) if d == 1)
    return A.sum(axis=keep, keepdims=True).reshape(B.shape).astype(A.dtype)


class TestSumReduceLike(hu.HypothesisTestCase):
    def test_reference(self):
        rng = np.random.RandomState(0)
        A = rng.randn(2, 3, 4, 5).astype(np.float32)
        for b_shape, kwargs, axis in [
            ((4, 5), {}, None),
            ((3, 4), {"axis": 1}, 1),
            ((3,), {"axis_str": "C"}, 1),
            ((5,), {"axis_str": "C", "order": "NHWC"}, 3),
            ((1,), {}, None),
            ((1, 1), {}, None),
            ((1, 3, 4, 1), {"axis": 0}, 0),
            ((2, 3, 4, 5), {}, None),
        ]:
            B = np.zeros(b_shape, np.float32)
            op = core.CreateOperator("SumReduceLike", ["A", "B"], ["C"], **kwargs)
            self.assertReferenceChecks(
                CPU, op, [A, B], lambda A, B: [reduce_like(A, B, axis)], threshold=1e-4, atol=1e-4
            )

    def test_integer_and_double(self):
        for dtype in (np.int32, np.int64, np.float64):
            A = np.arange(24).reshape(2, 3, 4).astype(dtype)
            B = np.zeros(3, dtype)
            op = core.CreateOperator("SumReduceLike", ["A", "B"], ["C"], axis=1)
            self.assertReferenceChecks(CPU, op, [A, B], lambda A, B: [A.sum(axis=(0, 2))])

    def test_ignores_broadcast_argument(self):
        A = np.ones((2, 3), np.float32)
        op = core.CreateOperator("SumReduceLike", ["A", "B"], ["C"], broadcast=1, axis=0)
        self.assertReferenceChecks(
            CPU, op, [A, np.zeros(2, np.float32)], lambda A, B: [np.array([3.0, 3.0], np.float32)]
        )

    def test_errors(self):
        op = core.CreateOperator("SumReduceLike", ["A", "B"], ["C"])
        self.assertRunOpRaises(
            CPU,
            op,
            [np.zeros((2, 3), np.float32), np.zeros(4, np.float32)],
            exception=RuntimeError,
            regexp=r"^\[SumReduceLike\] B \(4,\) does not match A \(2, 3\)",
        )
        self.assertRunOpRaises(
            CPU,
            op,
            [np.zeros(3, bool), np.zeros(3, bool)],
            exception=RuntimeError,
            regexp=r"^\[SumReduceLike\] unsupported type bool",
        )


R = np.random.RandomState(0)


@needs_gpu
@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int32, np.int64])
@pytest.mark.parametrize(
    "b_shape,args",
    [
        ((4, 5), {}),
        ((3, 4), {"axis": 1}),
        ((3,), {"axis_str": "C", "order": "NCHW"}),
        ((1,), {}),
        ((2, 3, 4, 5), {}),
    ],
)
def test_sum_reduce_like(dtype, b_shape, args):
    a = (R.randn(2, 3, 4, 5) * 10).astype(dtype)
    b = np.zeros(b_shape, dtype)
    check_cpu_gpu(
        core.CreateOperator("SumReduceLike", ["a", "b"], ["c"], **args),
        [a, b],
        rtol=1e-5,
        atol=1e-4,
    )


if __name__ == "__main__":
    unittest.main()
