"""Comparison (LT, LE, GT, GE, EQ) and logical (And, Or, Xor, Not) ops: bool outputs, the legacy
broadcast, no gradients, bad input."""
import unittest

import numpy as np

from caffe2.python import core
import caffe2.python.hypothesis_test_util as hu

CPU = core.DeviceOption(0)
COMPARE = {"LT": np.less, "LE": np.less_equal, "GT": np.greater, "GE": np.greater_equal,
           "EQ": np.equal}
LOGICAL = {"And": np.logical_and, "Or": np.logical_or, "Xor": np.logical_xor}


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
        self.assertReferenceChecks(CPU, core.CreateOperator("EQ", ["A", "B"], ["C"]), [A, B],
                                   lambda A, B: [A == B])

    def test_broadcast(self):
        rng = np.random.RandomState(1)
        A = rng.randint(-2, 3, size=(2, 3, 4)).astype(np.float32)
        cases = [(np.array([0.], np.float32), {}, ()),
                 (rng.randint(-2, 3, size=(3,)).astype(np.float32), {"axis": 1}, (1, 3, 1)),
                 (rng.randint(-2, 3, size=(4,)).astype(np.float32), {"axis_str": "W", "order": "NHW"},
                  (1, 1, 4))]
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
        self.assertRunOpRaises(CPU, core.CreateOperator("GT", ["A", "B"], ["C"]),
                               [A, np.zeros(3, np.float32)], exception=RuntimeError,
                               regexp=r"^\[GT\] A \(2, 3\) and B \(3,\) differ in shape")
        self.assertRunOpRaises(CPU, core.CreateOperator("GT", ["A", "B"], ["C"], axis=1),
                               [A, A], exception=RuntimeError,
                               regexp=r"^\[GT\] axis or axis_str is set but broadcast is not enabled")
        U = np.zeros(3, np.uint8)
        self.assertRunOpRaises(CPU, core.CreateOperator("LT", ["A", "B"], ["C"]), [U, U],
                               exception=RuntimeError, regexp=r"^\[LT\] unsupported type unsigned char")


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
            self.assertReferenceChecks(CPU, core.CreateOperator("Not", ["A"], [out]), [A],
                                       lambda A: [~A])

    def test_errors(self):
        F = np.zeros(3, np.float32)
        self.assertRunOpRaises(CPU, core.CreateOperator("And", ["A", "B"], ["C"]), [F, F],
                               exception=RuntimeError,
                               regexp=r"^\[And\] unsupported type float \(supported: bool\)")
        self.assertRunOpRaises(CPU, core.CreateOperator("Not", ["A"], ["B"]), [F],
                               exception=RuntimeError, regexp=r"^\[Not\] unsupported type float")
        self.assertRunOpRaises(CPU, core.CreateOperator("Or", ["A", "B"], ["B"], broadcast=1),
                               [np.zeros((2, 3), bool), np.zeros(3, bool)], exception=RuntimeError,
                               regexp=r"^\[Or\] input 1 and output 0 are both .B., but this op "
                                      r"cannot run in place")


if __name__ == "__main__":
    unittest.main()
