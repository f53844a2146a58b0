"""Comparison ops (LT, LE, GT, GE, EQ): bool outputs, the legacy broadcast, no gradients, bad input;
device checks against the CPU kernels."""
import numpy as np
import pytest

from caffe2.python import core
import caffe2.python.hypothesis_test_util as hu

from device_check import check_cpu_gpu, needs_gpu

COVERED_CUDA_OPS = ["LT", "LE", "GT", "GE", "EQ"]

CPU = core.DeviceOption(0)

COMPARE = {
    "LT": np.less,
    "LE": np.less_equal,
    "GT": np.greater,
    "GE": np.greater_equal,
    "EQ": np.equal,
}


class TestCompare(hu.HypothesisTestCase):
    def test_same_shape_all_types(self):
        rng = np.random.RandomState(0)
        for dtype in (np.float32, np.float64, np.int32, np.int64):
            A = rng.randint(-2, 3, size=(3, 4)).astype(dtype)
            B = rng.randint(-2, 3, size=(3, 4)).astype(dtype)
            for op_type, fn in COMPARE.items():
                op = core.CreateOperator(op_type, ["A", "B"], ["C"])
                self.assertReferenceChecks(CPU, op, [A, B], lambda A, B: [fn(A, B)])

    def test_bool_inputs(self):
        A = np.array([True, False, True])
        B = np.array([True, True, False])
        self.assertReferenceChecks(
            CPU, core.CreateOperator("EQ", ["A", "B"], ["C"]), [A, B], lambda A, B: [A == B]
        )

    def test_broadcast(self):
        rng = np.random.RandomState(1)
        A = rng.randint(-2, 3, size=(2, 3, 4)).astype(np.float32)
        cases = [
            (np.array([0.0], np.float32), {}, ()),
            (rng.randint(-2, 3, size=(3,)).astype(np.float32), {"axis": 1}, (1, 3, 1)),
            (
                rng.randint(-2, 3, size=(4,)).astype(np.float32),
                {"axis_str": "W", "order": "NHW"},
                (1, 1, 4),
            ),
        ]
        for B, kwargs, shape in cases:
            for op_type, fn in COMPARE.items():
                op = core.CreateOperator(op_type, ["A", "B"], ["C"], broadcast=1, **kwargs)
                self.assertReferenceChecks(CPU, op, [A, B], lambda A, B: [fn(A, B.reshape(shape))])

    def test_no_gradient(self):
        op = core.CreateOperator("LT", ["A", "B"], ["C"])
        with self.assertRaisesRegex(Exception, "should not have a gradient"):
            core.GradientRegistry.GetGradientForOp(op, ["C_grad"])

    def test_errors(self):
        A = np.zeros((2, 3), np.float32)
        self.assertRunOpRaises(
            CPU,
            core.CreateOperator("GT", ["A", "B"], ["C"]),
            [A, np.zeros(3, np.float32)],
            exception=RuntimeError,
            regexp=r"^\[GT\] A \(2, 3\) and B \(3,\) differ in shape",
        )
        self.assertRunOpRaises(
            CPU,
            core.CreateOperator("GT", ["A", "B"], ["C"], axis=1),
            [A, A],
            exception=RuntimeError,
            regexp=r"^\[GT\] axis or axis_str is set but broadcast is not enabled",
        )
        U = np.zeros(3, np.uint8)
        self.assertRunOpRaises(
            CPU,
            core.CreateOperator("LT", ["A", "B"], ["C"]),
            [U, U],
            exception=RuntimeError,
            regexp=r"^\[LT\] unsupported type unsigned char",
        )


COMPARE_OPS = ["LT", "LE", "GT", "GE", "EQ"]


@needs_gpu
@pytest.mark.parametrize("op_type", COMPARE_OPS)
def test_comparisons(op_type):
    rng = np.random.RandomState(4)
    a = rng.randint(-3, 3, (4, 5)).astype(np.float32)
    b = rng.randint(-3, 3, (5,)).astype(np.float32)
    out = check_cpu_gpu(core.CreateOperator(op_type, ["a", "b"], ["c"], broadcast=1), [a, b])
    assert out[0].dtype == np.bool_
