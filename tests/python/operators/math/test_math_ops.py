"""Cos, Sin, Cube, Reciprocal, Log1p, Ceil and Floor as one table: numpy references (float and
double, in place), finite-difference gradients and the gradient ops' inputs (upstream's), no
gradient for Ceil and Floor, and device checks of every kernel (the other one-input math ops are
in operators/unary/test_unary_ops.py)."""
import numpy as np
import pytest
from hypothesis import given, settings
import hypothesis.strategies as st

from caffe2.python import core
import caffe2.python.hypothesis_test_util as hu

from device_check import check_cpu_gpu, check_gradient_cpu_gpu, needs_gpu

COVERED_CUDA_OPS = [
    "Cos",
    "CosGradient",
    "Sin",
    "SinGradient",
    "Cube",
    "CubeGradient",
    "Reciprocal",
    "ReciprocalGradient",
    "Log1p",
    "Log1pGradient",
    "Ceil",
    "Floor",
]

CPU = core.DeviceOption(0)


def away_from_integers(x):
    """Moves values near an integer (the jumps of ceil and floor) to the middle between two."""
    return np.floor(x) + 0.5 + (x - np.floor(x) - 0.5) * 0.5


# op -> (reference, input transform, gradient inputs (None: no gradient))
MATH = {
    "Cos": (np.cos, None, ["X"]),
    "Sin": (np.sin, None, ["X"]),
    "Cube": (lambda x: x**3, None, ["X"]),
    "Reciprocal": (np.reciprocal, lambda x: np.sign(x) * (np.abs(x) + 0.5), ["Y"]),
    "Log1p": (np.log1p, lambda x: np.abs(x), ["X"]),
    "Ceil": (np.ceil, away_from_integers, None),
    "Floor": (np.floor, away_from_integers, None),
}


class TestMathOps(hu.HypothesisTestCase):
    @given(
        op_type=st.sampled_from(sorted(MATH)),
        X=hu.tensor(elements=hu.floats(min_value=-3, max_value=3)),
        dtype=st.sampled_from([np.float32, np.float64]),
    )
    @settings(deadline=None, max_examples=30)
    def test_reference_and_gradient(self, op_type, X, dtype):
        ref, transform, _ = MATH[op_type]
        X = (transform(X) if transform else X).astype(dtype)
        op = core.CreateOperator(op_type, ["X"], ["Y"])
        self.assertReferenceChecks(CPU, op, [X], lambda X: [ref(X).astype(dtype)])
        in_place = core.CreateOperator(op_type, ["X"], ["X"])
        self.assertReferenceChecks(CPU, in_place, [X], lambda X: [ref(X).astype(dtype)])
        if MATH[op_type][2] is not None and dtype == np.float32:
            self.assertGradientChecks(CPU, op, [X], 0, [0])


@pytest.mark.parametrize("op_type", sorted(MATH))
def test_gradient_ops(op_type):
    op = core.CreateOperator(op_type, ["X"], ["Y"])
    saved = MATH[op_type][2]
    if saved is None:
        grad_ops, grads = core.GradientRegistry.GetGradientForOp(op, ["Y_grad"])
        assert grad_ops == [] and grads == [None]
        return
    grad_ops, _ = core.GradientRegistry.GetGradientForOp(op, ["Y_grad"])
    assert [(g.type, list(g.input)) for g in grad_ops] == [
        (op_type + "Gradient", saved + ["Y_grad"])
    ]


@needs_gpu
@pytest.mark.parametrize("op_type", sorted(MATH))
def test_device_check(op_type):
    ref, transform, saved = MATH[op_type]
    X = np.random.RandomState(0).uniform(-2, 2, (3, 4)).astype(np.float32)
    X = transform(X).astype(np.float32) if transform else X
    op = core.CreateOperator(op_type, ["X"], ["Y"])
    check_cpu_gpu(op, [X])
    if saved is not None:
        check_gradient_cpu_gpu(op, [X])
