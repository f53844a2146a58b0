"""Unary math and activations (Exp, Log, Sqrt, Sqr, Negative, Abs, Sigmoid, Tanh, Relu, LeakyRelu,
Elu, Softplus, Softsign, Clip, Scale): numpy references, finite-difference gradients, in-place
variants, the gradient ops emitted, and bad input."""
import unittest

import hypothesis.strategies as st
import numpy as np
from hypothesis import given, settings

from caffe2.python import core
import caffe2.python.hypothesis_test_util as hu

CPU = core.DeviceOption(0)


def away_from(x, points, margin=0.1):
    """Moves elements within `margin` of a kink (where finite differences fail) away from it."""
    x = x.copy()
    for p in points:
        near = np.abs(x - p) < margin
        x[near] = p + margin * np.where(x[near] >= p, 2, -2)
    return x


def softplus(x):
    return np.log1p(np.exp(x))


# op type -> (kwargs, reference, input transform, kinks)
UNARY = {
    "Exp": ({}, np.exp, None, []),
    "Log": ({}, np.log, lambda x: np.abs(x) + 1.0, []),
    "Sqrt": ({}, np.sqrt, lambda x: np.abs(x) + 1.0, []),
    "Sqr": ({}, np.square, None, []),
    "Negative": ({}, np.negative, None, []),
    "Abs": ({}, np.abs, None, [0.0]),
    "Sigmoid": ({}, lambda x: 1 / (1 + np.exp(-x)), None, []),
    "Tanh": ({}, np.tanh, None, []),
    "Relu": ({}, lambda x: np.maximum(x, 0), None, [0.0]),
    "LeakyRelu": ({"alpha": 0.2}, lambda x: np.where(x >= 0, x, 0.2 * x), None, [0.0]),
    "Elu": ({"alpha": 0.7}, lambda x: np.where(x > 0, x, 0.7 * (np.exp(x) - 1)), None, [0.0]),
    "Softplus": ({}, softplus, None, []),
    "Softsign": ({}, lambda x: x / (1 + np.abs(x)), None, [0.0]),
    "Clip": ({"min": -0.5, "max": 0.8}, lambda x: np.clip(x, -0.5, 0.8), None, [-0.5, 0.8]),
    "Scale": ({"scale": -1.5}, lambda x: -1.5 * x, None, []),
}
# Ops whose gradient reads only Y and dY, so an in-place forward keeps a correct gradient.
IN_PLACE_GRADIENT = ["Exp", "Negative", "Sigmoid", "Tanh", "Relu", "LeakyRelu", "Elu", "Softplus",
                     "Clip", "Scale", "Sqrt"]


def make_input(op_type, X):
    _, _, transform, kinks = UNARY[op_type]
    X = transform(X) if transform else X
    return away_from(X, kinks).astype(X.dtype)


class TestUnary(hu.HypothesisTestCase):
    @given(op_type=st.sampled_from(sorted(UNARY)), X=hu.tensor(min_dim=1, max_dim=3, max_value=3),
           in_place=st.booleans())
    @settings(deadline=None, max_examples=30)
    def test_reference_and_gradient(self, op_type, X, in_place):
        kwargs, ref, _, _ = UNARY[op_type]
        X = make_input(op_type, X)
        op = core.CreateOperator(op_type, ["X"], ["X" if in_place else "Y"], **kwargs)
        self.assertReferenceChecks(CPU, op, [X], lambda X: [ref(X).astype(np.float32)])
        if not in_place or op_type in IN_PLACE_GRADIENT:
            self.assertGradientChecks(CPU, op, [X], 0, [0])

    def test_every_op_once(self):
        rng = np.random.RandomState(0)
        for op_type, (kwargs, ref, _, _) in sorted(UNARY.items()):
            X = make_input(op_type, rng.randn(3, 4).astype(np.float32))
            for out in ("Y", "X"):
                op = core.CreateOperator(op_type, ["X"], [out], **kwargs)
                self.assertReferenceChecks(CPU, op, [X], lambda X: [ref(X).astype(np.float32)])
            self.assertGradientChecks(CPU, core.CreateOperator(op_type, ["X"], ["Y"], **kwargs),
                                      [X], 0, [0])

    def test_double(self):
        X = np.random.RandomState(1).rand(5).astype(np.float64) + 0.5
        for op_type, (kwargs, ref, _, _) in sorted(UNARY.items()):
            op = core.CreateOperator(op_type, ["X"], ["Y"], **kwargs)
            self.assertReferenceChecks(CPU, op, [X], lambda X: [ref(X)])

    def test_negative_and_abs_integers(self):
        X = np.array([[-3, 0, 2]], dtype=np.int32)
        self.assertReferenceChecks(CPU, core.CreateOperator("Negative", ["X"], ["Y"]), [X],
                                   lambda X: [-X])
        self.assertReferenceChecks(CPU, core.CreateOperator("Abs", ["X"], ["Y"]), [X.astype(np.int64)],
                                   lambda X: [np.abs(X)])

    def test_softplus_is_stable_for_large_inputs(self):
        X = np.array([-100., -20., 0., 20., 100.], dtype=np.float32)
        self.assertReferenceChecks(CPU, core.CreateOperator("Softplus", ["X"], ["Y"]), [X],
                                   lambda X: [np.logaddexp(0, X).astype(np.float32)])

    def test_clip_defaults_do_nothing(self):
        X = np.array([-1e30, 0., 1e30], dtype=np.float32)
        self.assertReferenceChecks(CPU, core.CreateOperator("Clip", ["X"], ["Y"]), [X], lambda X: [X])

    def test_gradient_of_output_overwritten_by_relu(self):
        X = away_from(np.random.RandomState(2).randn(4, 3).astype(np.float32), [0.0])
        op = core.CreateOperator("ReluGradient", ["Y", "dY"], ["dY"])
        dY = np.random.RandomState(3).randn(4, 3).astype(np.float32)
        self.assertReferenceChecks(CPU, op, [np.maximum(X, 0), dY],
                                   lambda Y, dY: [np.where(Y > 0, dY, 0)])


class TestGradientOps(unittest.TestCase):
    def grad(self, op_type, out="Y", **kwargs):
        op = core.CreateOperator(op_type, ["X"], [out], **kwargs)
        ops, _ = core.GradientRegistry.GetGradientForOp(op, [out + "_grad"])
        return [(o.type, list(o.input), list(o.output)) for o in ops], ops

    def test_names_and_orders(self):
        self.assertEqual(self.grad("Exp")[0], [("Mul", ["Y", "Y_grad"], ["X_grad"])])
        self.assertEqual(self.grad("Log")[0], [("Div", ["Y_grad", "X"], ["X_grad"])])
        desc, ops = self.grad("Sqrt")
        self.assertEqual(desc, [("Scale", ["Y_grad"], ["X_grad"]), ("Div", ["X_grad", "Y"], ["X_grad"])])
        self.assertEqual(ops[0].arg[0].f, 0.5)
        desc, ops = self.grad("Sqr")
        self.assertEqual(desc, [("Scale", ["Y_grad"], ["Y_grad"]), ("Mul", ["Y_grad", "X"], ["X_grad"])])
        self.assertEqual(ops[0].arg[0].f, 2.0)
        self.assertEqual(self.grad("Negative")[0], [("Negative", ["Y_grad"], ["X_grad"])])
        self.assertEqual(self.grad("Abs")[0], [("AbsGradient", ["X", "Y_grad"], ["X_grad"])])
        self.assertEqual(self.grad("Softsign")[0], [("SoftsignGradient", ["X", "Y_grad"], ["X_grad"])])
        for op_type in ("Sigmoid", "Tanh", "Relu", "LeakyRelu", "Elu", "Softplus", "Clip"):
            self.assertEqual(self.grad(op_type)[0],
                             [(op_type + "Gradient", ["Y", "Y_grad"], ["X_grad"])])
        self.assertEqual(self.grad("Relu", out="X")[0], [("ReluGradient", ["X", "X_grad"], ["X_grad"])])
        desc, ops = self.grad("Scale", scale=3.0)
        self.assertEqual(desc, [("Scale", ["Y_grad"], ["X_grad"])])
        self.assertEqual(ops[0].arg[0].f, 3.0)
        _, ops = self.grad("LeakyRelu", alpha=0.3)
        self.assertAlmostEqual(ops[0].arg[0].f, 0.3)

    def test_softsign_in_place_has_no_gradient(self):
        with self.assertRaisesRegex(Exception, r"\[Softsign\] no gradient for in-place Softsign"):
            self.grad("Softsign", out="X")


class TestErrors(hu.HypothesisTestCase):
    def test_unsupported_dtype(self):
        op = core.CreateOperator("Exp", ["X"], ["Y"])
        self.assertRunOpRaises(CPU, op, [np.ones(3, np.int32)], exception=RuntimeError,
                               regexp=r"^\[Exp\] unsupported type int for X \(supported: float, double\)")

    def test_softsign_gradient_not_in_place(self):
        op = core.CreateOperator("SoftsignGradient", ["X", "dY"], ["dY"])
        self.assertRunOpRaises(CPU, op, [np.ones(3, np.float32)] * 2, exception=RuntimeError,
                               regexp=r"^\[SoftsignGradient\] input 1 and output 0 are both .dY., "
                                      r"but this op cannot run in place")

    def test_gradient_shape_mismatch(self):
        op = core.CreateOperator("SigmoidGradient", ["Y", "dY"], ["dX"])
        self.assertRunOpRaises(CPU, op, [np.ones(3, np.float32), np.ones(4, np.float32)],
                               exception=RuntimeError,
                               regexp=r"^\[SigmoidGradient\] input 0 \(3,\) and dY \(4,\) must have "
                                      r"the same shape")

    def test_clip_min_above_max(self):
        op = core.CreateOperator("Clip", ["X"], ["Y"], min=1.0, max=0.0)
        self.assertRunOpRaises(CPU, op, [np.ones(3, np.float32)], exception=RuntimeError,
                               regexp=r"^\[Clip\] min 1 is greater than max 0")

    def test_float_argument_typing(self):
        op = core.CreateOperator("Scale", ["X"], ["Y"], scale=2)
        self.assertRunOpRaises(CPU, op, [np.ones(3, np.float32)], exception=RuntimeError,
                               regexp=r"scale")


if __name__ == "__main__":
    unittest.main()
