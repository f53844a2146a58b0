"""Pow with the `exponent` argument or an exponent tensor (legacy broadcast): references,
finite-difference gradients, in-place variants and bad input; device checks against the CPU
kernel."""
import unittest

import numpy as np
import pytest

from caffe2.python import core
import caffe2.python.hypothesis_test_util as hu

from device_check import check_cpu_gpu, check_gradient_cpu_gpu, needs_gpu

COVERED_CUDA_OPS = ["Pow"]

CPU = core.DeviceOption(0)


def positive(*shape, seed=0):
    return (np.random.RandomState(seed).rand(*shape) + 0.5).astype(np.float32)


class TestPow(hu.HypothesisTestCase):
    def test_scalar_exponent(self):
        X = positive(3, 4)
        for e in (2.0, 3.0, 0.5, -1.0):
            op = core.CreateOperator("Pow", ["X"], ["Y"], exponent=e)
            self.assertReferenceChecks(CPU, op, [X], lambda X: [np.power(X, e)])
            self.assertGradientChecks(CPU, op, [X], 0, [0], stepsize=0.01, threshold=0.01)

    def test_scalar_exponent_in_place(self):
        X = positive(2, 3)
        op = core.CreateOperator("Pow", ["X"], ["X"], exponent=2.0)
        self.assertReferenceChecks(CPU, op, [X], lambda X: [X * X])
        self.assertGradientChecks(CPU, op, [X], 0, [0], stepsize=0.01, threshold=0.01)

    def test_tensor_exponent(self):
        X = positive(3, 4)
        E = positive(3, 4, seed=1)
        op = core.CreateOperator("Pow", ["X", "E"], ["Y"])
        self.assertReferenceChecks(CPU, op, [X, E], lambda X, E: [np.power(X, E)])
        for i in range(2):
            self.assertGradientChecks(CPU, op, [X, E], i, [0], stepsize=0.01, threshold=0.01)

    def test_tensor_exponent_broadcast(self):
        X = positive(2, 3, 4)
        for E, kwargs, shape in [
            (positive(3, seed=1), {"axis": 1}, (1, 3, 1)),
            (positive(4, seed=1), {}, (1, 1, 4)),
            (positive(1, seed=1), {}, ()),
        ]:
            op = core.CreateOperator("Pow", ["X", "E"], ["Y"], broadcast=1, **kwargs)
            self.assertReferenceChecks(
                CPU, op, [X, E], lambda X, E: [np.power(X, E.reshape(shape))]
            )
            for i in range(2):
                self.assertGradientChecks(CPU, op, [X, E], i, [0], stepsize=0.01, threshold=0.01)

    def test_in_place_tensor_exponent(self):
        X, E = positive(5), positive(5, seed=1)
        for out in ("X", "E"):
            op = core.CreateOperator("Pow", ["X", "E"], [out])
            self.assertReferenceChecks(CPU, op, [X, E], lambda X, E: [np.power(X, E)])

    def test_gradient_ops(self):
        op = core.CreateOperator("Pow", ["X"], ["Y"], exponent=3.0)
        ops, g = core.GradientRegistry.GetGradientForOp(op, ["Y_grad"])
        self.assertEqual(
            [(o.type, list(o.input), list(o.output)) for o in ops],
            [
                ("Pow", ["X"], ["X_grad"]),
                ("Mul", ["X_grad", "Y_grad"], ["X_grad"]),
                ("Scale", ["X_grad"], ["X_grad"]),
            ],
        )
        self.assertEqual((ops[0].arg[0].f, ops[2].arg[0].f), (2.0, 3.0))

    def test_errors(self):
        X = positive(2, 3)
        self.assertRunOpRaises(
            CPU,
            core.CreateOperator("Pow", ["X"], ["Y"]),
            [X],
            exception=RuntimeError,
            regexp=r"^\[Pow\] needs the `exponent` argument or an exponent tensor",
        )
        self.assertRunOpRaises(
            CPU,
            core.CreateOperator("Pow", ["X", "E"], ["Y"], exponent=2.0),
            [X, X],
            exception=RuntimeError,
            regexp=r"^\[Pow\] give the exponent as the argument or as input 1",
        )
        self.assertRunOpRaises(
            CPU,
            core.CreateOperator("Pow", ["X", "E"], ["Y"]),
            [X, positive(3)],
            exception=RuntimeError,
            regexp=r"^\[Pow\] A \(2, 3\) and B \(3,\) differ in shape",
        )
        self.assertRunOpRaises(
            CPU,
            core.CreateOperator("Pow", ["X", "E"], ["E"], broadcast=1),
            [X, positive(3)],
            exception=RuntimeError,
            regexp=r"in-place with E as the output is not allowed",
        )
        self.assertRunOpRaises(
            CPU,
            core.CreateOperator("Pow", ["X"], ["Y"], exponent=2.0),
            [np.ones(3, np.int32)],
            exception=RuntimeError,
            regexp=r"^\[Pow\] unsupported type int",
        )
        with self.assertRaisesRegex(Exception, r"no gradient for in-place Pow"):
            core.GradientRegistry.GetGradientForOp(
                core.CreateOperator("Pow", ["X", "E"], ["X"]), ["X_grad"]
            )


@needs_gpu
@pytest.mark.parametrize(
    "e_shape,args",
    [(None, {"exponent": 3.0}), (None, {"exponent": 0.5}), ((3, 4), {}), ((4,), {"broadcast": 1})],
)
def test_pow(e_shape, args):
    rng = np.random.RandomState(12)
    x = (rng.rand(3, 4) + 0.5).astype(np.float32)
    inputs = [x] if e_shape is None else [x, rng.randn(*e_shape).astype(np.float32)]
    op = core.CreateOperator("Pow", ["x", "e"][: len(inputs)], ["y"], **args)
    check_cpu_gpu(op, inputs, rtol=1e-5, atol=1e-6)
    if e_shape is None:
        check_gradient_cpu_gpu(op, inputs, rtol=1e-5, atol=1e-6)


if __name__ == "__main__":
    unittest.main()
