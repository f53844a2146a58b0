"""Mean, Max, Min over several same-shaped inputs: references, gradients (MeanGradient,
MaxGradient, MinGradient), in-place variants, and bad input."""
import unittest

import hypothesis.strategies as st
import numpy as np
from hypothesis import given, settings

from caffe2.python import core
import caffe2.python.hypothesis_test_util as hu

CPU = core.DeviceOption(0)
REFS = {"Mean": lambda *xs: np.mean(xs, axis=0), "Max": lambda *xs: np.max(xs, axis=0),
        "Min": lambda *xs: np.min(xs, axis=0)}


def distinct_inputs(n, shape, seed):
    """Inputs whose elements differ by at least 0.2 at every position, so max/min are stable under
    the finite-difference step."""
    rng = np.random.RandomState(seed)
    size = int(np.prod(shape))
    base = np.stack([rng.permutation(n) for _ in range(size)], axis=1).astype(np.float32) * 0.5
    return [(b.reshape(shape) + rng.uniform(-0.1, 0.1, shape)).astype(np.float32) for b in base]


class TestMeanMinMax(hu.HypothesisTestCase):
    @given(op_type=st.sampled_from(sorted(REFS)), n=st.integers(1, 4),
           shape=st.lists(st.integers(1, 4), min_size=1, max_size=3), seed=st.integers(0, 100),
           in_place=st.booleans())
    @settings(deadline=None, max_examples=10)
    def test_reference_and_gradient(self, op_type, n, shape, seed, in_place):
        xs = distinct_inputs(n, shape, seed)
        names = ["X%d" % i for i in range(n)]
        op = core.CreateOperator(op_type, names, ["X0" if in_place else "Y"])
        self.assertReferenceChecks(CPU, op, xs, lambda *xs: [REFS[op_type](*xs)])
        if in_place and n > 1:
            return
        for i in range(n):
            self.assertGradientChecks(CPU, op, xs, i, [0])

    def test_every_op_all_inputs(self):
        xs = distinct_inputs(3, (2, 3), 7)
        for op_type, ref in REFS.items():
            op = core.CreateOperator(op_type, ["A", "B", "C"], ["Y"])
            self.assertReferenceChecks(CPU, op, xs, lambda *xs: [ref(*xs)])
            for i in range(3):
                self.assertGradientChecks(CPU, op, xs, i, [0])

    def test_gradient_ops(self):
        op = core.CreateOperator("Max", ["A", "B"], ["Y"])
        ops, g = core.GradientRegistry.GetGradientForOp(op, ["Y_grad"])
        self.assertEqual([(o.type, list(o.input), list(o.output)) for o in ops],
                         [("MaxGradient", ["Y", "Y_grad", "A", "B"], ["A_grad", "B_grad"])])
        op = core.CreateOperator("Min", ["A", "B"], ["Y"])
        ops, _ = core.GradientRegistry.GetGradientForOp(op, ["Y_grad"])
        self.assertEqual(ops[0].type, "MinGradient")
        op = core.CreateOperator("Mean", ["A", "B", "C"], ["Y"])
        ops, _ = core.GradientRegistry.GetGradientForOp(op, ["Y_grad"])
        self.assertEqual([(o.type, list(o.input), list(o.output)) for o in ops],
                         [("MeanGradient", ["Y_grad"], ["A_grad", "B_grad", "C_grad"])])

    def test_ties_give_every_maximum_the_gradient(self):
        A = np.array([1., 2.], np.float32)
        B = np.array([1., 0.], np.float32)
        op = core.CreateOperator("MaxGradient", ["Y", "dY", "A", "B"], ["dA", "dB"])
        self.assertReferenceChecks(CPU, op, [np.maximum(A, B), np.array([5., 6.], np.float32), A, B],
                                   lambda Y, dY, A, B: [np.array([5., 6.]), np.array([5., 0.])])

    def test_errors(self):
        for op_type in REFS:
            op = core.CreateOperator(op_type, ["A", "B"], ["Y"])
            self.assertRunOpRaises(CPU, op, [np.zeros((2, 3), np.float32), np.zeros(3, np.float32)],
                                   exception=RuntimeError,
                                   regexp=r"^\[%s\] input 1 has shape \(3,\) but input 0 has \(2, 3\)"
                                   % op_type)
            self.assertRunOpRaises(CPU, op, [np.zeros(3, np.float32), np.zeros(3, np.float64)],
                                   exception=RuntimeError,
                                   regexp=r"^\[%s\] input 1 has type double but input 0 has float"
                                   % op_type)
            self.assertRunOpRaises(CPU, op, [np.zeros(3, np.int32), np.zeros(3, np.int32)],
                                   exception=RuntimeError,
                                   regexp=r"^\[%s\] unsupported type int \(supported: float, double\)"
                                   % op_type)


if __name__ == "__main__":
    unittest.main()
