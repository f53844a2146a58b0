"""Mul: the same blob as both inputs, the gradient ops emitted, and no gradient in place. The checks
Mul shares with Add, Sub and Div are in test_elementwise_ops.py."""
import unittest

import numpy as np

from caffe2.python import core
import caffe2.python.hypothesis_test_util as hu

CPU = core.DeviceOption(0)


def inputs(a_shape, b_shape, seed=0, positive_b=False):
    rng = np.random.RandomState(seed)
    A = rng.randn(*a_shape).astype(np.float32)
    B = rng.randn(*b_shape).astype(np.float32)
    if positive_b:
        B = (np.abs(B) + 1.0).astype(np.float32)
    return A, B


class TestInPlace(hu.HypothesisTestCase):
    def test_same_blob_twice(self):
        A, _ = inputs((5,), (5,))
        op = core.CreateOperator("Mul", ["A", "A"], ["A"])
        self.assertReferenceChecks(CPU, op, [A, A], lambda A, _: [A * A])


class TestGradientOps(unittest.TestCase):
    def grad(self, op):
        return core.GradientRegistry.GetGradientForOp(op, ["C_grad"])

    def test_mul(self):
        ops, g = self.grad(core.CreateOperator("Mul", ["A", "B"], ["C"]))
        self.assertEqual(
            [(o.type, list(o.input), list(o.output)) for o in ops],
            [("Mul", ["C_grad", "B"], ["A_grad"]), ("Mul", ["C_grad", "A"], ["B_grad"])],
        )
        ops, g = self.grad(core.CreateOperator("Mul", ["A", "B"], ["C"], broadcast=1, axis=0))
        self.assertEqual(
            [(o.type, list(o.input), list(o.output)) for o in ops],
            [
                ("Mul", ["C_grad", "B"], ["A_grad"]),
                ("Mul", ["C_grad", "A"], ["B_grad_autogen_pre_red"]),
                ("SumReduceLike", ["B_grad_autogen_pre_red", "B"], ["B_grad"]),
            ],
        )
        self.assertEqual({a.name for a in ops[0].arg}, {"broadcast", "axis"})
        self.assertEqual(len(ops[1].arg), 0)
        self.assertEqual({a.name for a in ops[2].arg}, {"axis"})

    def test_mul_in_place_has_no_gradient(self):
        with self.assertRaisesRegex(Exception, r"\[Mul\] no gradient for in-place Mul"):
            self.grad(core.CreateOperator("Mul", ["A", "B"], ["A"]))
