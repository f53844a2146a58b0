"""Logical ops (And, Or, Xor, Not): bool outputs, the legacy broadcast, in place, bad input; device
checks against the CPU kernels."""
import numpy as np
import pytest

from caffe2.python import core
import caffe2.python.hypothesis_test_util as hu

from device_check import check_cpu_gpu, needs_gpu

COVERED_CUDA_OPS = ["And", "Or", "Xor", "Not"]

CPU = core.DeviceOption(0)

LOGICAL = {"And": np.logical_and, "Or": np.logical_or, "Xor": np.logical_xor}


class TestLogical(hu.HypothesisTestCase):
    def test_reference(self):
        rng = np.random.RandomState(2)
        A = rng.rand(2, 3, 4) > 0.5
        for op_type, fn in LOGICAL.items():
            B = rng.rand(2, 3, 4) > 0.5
            op = core.CreateOperator(op_type, ["A", "B"], ["C"])
            self.assertReferenceChecks(CPU, op, [A, B], lambda A, B: [fn(A, B)])
            op = core.CreateOperator(op_type, ["A", "B"], ["A"])
            self.assertReferenceChecks(CPU, op, [A, B], lambda A, B: [fn(A, B)])
            B = rng.rand(3) > 0.5
            op = core.CreateOperator(op_type, ["A", "B"], ["C"], broadcast=1, axis=1)
            self.assertReferenceChecks(CPU, op, [A, B], lambda A, B: [fn(A, B.reshape(1, 3, 1))])

    def test_not(self):
        A = np.array([[True, False], [False, False]])
        for out in ("Y", "A"):
            self.assertReferenceChecks(
                CPU, core.CreateOperator("Not", ["A"], [out]), [A], lambda A: [~A]
            )

    def test_errors(self):
        F = np.zeros(3, np.float32)
        self.assertRunOpRaises(
            CPU,
            core.CreateOperator("And", ["A", "B"], ["C"]),
            [F, F],
            exception=RuntimeError,
            regexp=r"^\[And\] unsupported type float \(supported: bool\)",
        )
        self.assertRunOpRaises(
            CPU,
            core.CreateOperator("Not", ["A"], ["B"]),
            [F],
            exception=RuntimeError,
            regexp=r"^\[Not\] unsupported type float",
        )
        self.assertRunOpRaises(
            CPU,
            core.CreateOperator("Or", ["A", "B"], ["B"], broadcast=1),
            [np.zeros((2, 3), bool), np.zeros(3, bool)],
            exception=RuntimeError,
            regexp=r"^\[Or\] input 1 and output 0 are both .B., but this op "
            r"cannot run in place",
        )


LOGICAL_OPS = ["And", "Or", "Xor"]


@needs_gpu
@pytest.mark.parametrize("op_type", LOGICAL_OPS)
def test_logical(op_type):
    rng = np.random.RandomState(5)
    a, b = rng.rand(6, 7) > 0.5, rng.rand(6, 7) > 0.5
    check_cpu_gpu(core.CreateOperator(op_type, ["a", "b"], ["c"]), [a, b])
    check_cpu_gpu(core.CreateOperator("Not", ["a"], ["c"]), [a])
