"""The unary ops as one table (the activations Sigmoid, Tanh, Relu, LeakyRelu, Elu, Softplus,
Softsign, Clip, and the first math ops of operators/math: Exp, Log, Sqrt, Sqr, Negative, Abs,
Scale): numpy references, finite-difference gradients, in-place variants, double and integer
inputs and the gradient ops emitted; device checks of every op against its CPU kernel (forward
and gradient, float16 on the GPU) and of the cuDNN-engine Relu, Sigmoid and Tanh. Checks of one
op alone are in its own test_<op>.py."""
import unittest

import hypothesis.strategies as st
import numpy as np
import pytest
from hypothesis import given, settings

from caffe2.python import core, workspace
import caffe2.python.hypothesis_test_util as hu

from device_check import check_cpu_gpu, check_gradient_cpu_gpu, gpu, gpu_semantics, needs_gpu

COVERED_CUDA_OPS = [
    "Relu",
    "Sigmoid",
    "Tanh",
    "Abs",
    "Softplus",
    "Softsign",
    "LeakyRelu",
    "Elu",
    "Clip",
    "ReluGradient",
    "SigmoidGradient",
    "TanhGradient",
    "AbsGradient",
    "SoftplusGradient",
    "SoftsignGradient",
    "LeakyReluGradient",
    "EluGradient",
    "ClipGradient",
    "Exp",
    "Log",
    "Sqrt",
    "Sqr",
    "Negative",
    "Scale",
    "Relu_ENGINE_CUDNN",
    "ReluGradient_ENGINE_CUDNN",
    "Sigmoid_ENGINE_CUDNN",
    "SigmoidGradient_ENGINE_CUDNN",
    "Tanh_ENGINE_CUDNN",
    "TanhGradient_ENGINE_CUDNN",
]

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
IN_PLACE_GRADIENT = [
    "Exp",
    "Negative",
    "Sigmoid",
    "Tanh",
    "Relu",
    "LeakyRelu",
    "Elu",
    "Softplus",
    "Clip",
    "Scale",
    "Sqrt",
]


def make_input(op_type, X):
    _, _, transform, kinks = UNARY[op_type]
    X = transform(X) if transform else X
    return away_from(X, kinks).astype(X.dtype)


class TestUnary(hu.HypothesisTestCase):
    @given(
        op_type=st.sampled_from(sorted(UNARY)),
        X=hu.tensor(min_dim=1, max_dim=3, max_value=3),
        in_place=st.booleans(),
    )
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
            self.assertGradientChecks(
                CPU, core.CreateOperator(op_type, ["X"], ["Y"], **kwargs), [X], 0, [0]
            )

    def test_double(self):
        X = np.random.RandomState(1).rand(5).astype(np.float64) + 0.5
        for op_type, (kwargs, ref, _, _) in sorted(UNARY.items()):
            op = core.CreateOperator(op_type, ["X"], ["Y"], **kwargs)
            self.assertReferenceChecks(CPU, op, [X], lambda X: [ref(X)])

    def test_negative_and_abs_integers(self):
        X = np.array([[-3, 0, 2]], dtype=np.int32)
        self.assertReferenceChecks(
            CPU, core.CreateOperator("Negative", ["X"], ["Y"]), [X], lambda X: [-X]
        )
        self.assertReferenceChecks(
            CPU,
            core.CreateOperator("Abs", ["X"], ["Y"]),
            [X.astype(np.int64)],
            lambda X: [np.abs(X)],
        )


class TestGradientOps(unittest.TestCase):
    def grad(self, op_type, out="Y", **kwargs):
        op = core.CreateOperator(op_type, ["X"], [out], **kwargs)
        ops, _ = core.GradientRegistry.GetGradientForOp(op, [out + "_grad"])
        return [(o.type, list(o.input), list(o.output)) for o in ops], ops

    def test_names_and_orders(self):
        self.assertEqual(self.grad("Exp")[0], [("Mul", ["Y", "Y_grad"], ["X_grad"])])
        self.assertEqual(self.grad("Log")[0], [("Div", ["Y_grad", "X"], ["X_grad"])])
        desc, ops = self.grad("Sqrt")
        self.assertEqual(
            desc, [("Scale", ["Y_grad"], ["X_grad"]), ("Div", ["X_grad", "Y"], ["X_grad"])]
        )
        self.assertEqual(ops[0].arg[0].f, 0.5)
        desc, ops = self.grad("Sqr")
        self.assertEqual(
            desc, [("Scale", ["Y_grad"], ["Y_grad"]), ("Mul", ["Y_grad", "X"], ["X_grad"])]
        )
        self.assertEqual(ops[0].arg[0].f, 2.0)
        self.assertEqual(self.grad("Negative")[0], [("Negative", ["Y_grad"], ["X_grad"])])
        self.assertEqual(self.grad("Abs")[0], [("AbsGradient", ["X", "Y_grad"], ["X_grad"])])
        self.assertEqual(
            self.grad("Softsign")[0], [("SoftsignGradient", ["X", "Y_grad"], ["X_grad"])]
        )
        for op_type in ("Sigmoid", "Tanh", "Relu", "LeakyRelu", "Elu", "Softplus", "Clip"):
            self.assertEqual(
                self.grad(op_type)[0], [(op_type + "Gradient", ["Y", "Y_grad"], ["X_grad"])]
            )
        self.assertEqual(
            self.grad("Relu", out="X")[0], [("ReluGradient", ["X", "X_grad"], ["X_grad"])]
        )
        desc, ops = self.grad("Scale", scale=3.0)
        self.assertEqual(desc, [("Scale", ["Y_grad"], ["X_grad"])])
        self.assertEqual(ops[0].arg[0].f, 3.0)
        _, ops = self.grad("LeakyRelu", alpha=0.3)
        self.assertAlmostEqual(ops[0].arg[0].f, 0.3)


UNARY_WITH_GRADIENT = {  # op -> (args, input filter)
    "Relu": ({}, None),
    "Sigmoid": ({}, None),
    "Tanh": ({}, None),
    "Abs": ({}, None),
    "Softplus": ({}, None),
    "Softsign": ({}, None),
    "LeakyRelu": ({"alpha": 0.2}, None),
    "Elu": ({"alpha": 0.7}, None),
    "Clip": ({"min": -0.3, "max": 0.4}, None),
}

UNARY_FORWARD = {
    "Exp": None,
    "Log": np.abs,
    "Sqrt": np.abs,
    "Sqr": None,
    "Negative": None,
    "Scale": None,
}


def _away_from_kinks(x):
    """Moves values off 0 and the Clip bounds, where a gradient is not smooth."""
    x = np.where(np.abs(x) < 0.05, 0.1, x)
    for bound in (-0.3, 0.4):
        x = np.where(np.abs(x - bound) < 0.05, bound + 0.1, x)
    return x.astype(np.float32)


@needs_gpu
@pytest.mark.parametrize("op_type", sorted(UNARY_WITH_GRADIENT))
@pytest.mark.parametrize("shape", [(7,), (3, 5, 4), (1000, 33)])
def test_unary_forward_and_gradient(op_type, shape):
    args, _ = UNARY_WITH_GRADIENT[op_type]
    x = _away_from_kinks(np.random.RandomState(0).randn(*shape))
    op = core.CreateOperator(op_type, ["x"], ["y"], **args)
    check_cpu_gpu(op, [x], rtol=1e-5, atol=1e-6)
    check_gradient_cpu_gpu(op, [x], rtol=1e-5, atol=1e-6)


@needs_gpu
@pytest.mark.parametrize("op_type", sorted(UNARY_FORWARD))
def test_unary_forward(op_type):
    x = np.random.RandomState(1).randn(4, 6).astype(np.float32)
    prepare = UNARY_FORWARD[op_type]
    if prepare is not None:
        x = prepare(x) + 0.1
    args = {"scale": 2.5} if op_type == "Scale" else {}
    check_cpu_gpu(core.CreateOperator(op_type, ["x"], ["y"], **args), [x], rtol=1e-5, atol=1e-6)
    check_cpu_gpu(
        core.CreateOperator(op_type, ["x"], ["y"], **args),
        [x.astype(np.float64)],
        rtol=1e-12,
        atol=1e-12,
    )


@needs_gpu
@gpu_semantics
@pytest.mark.parametrize(
    "op_type,reference",
    [
        ("Relu", lambda x: np.maximum(x, 0)),
        ("Sigmoid", lambda x: 1 / (1 + np.exp(-x))),
        ("Tanh", np.tanh),
        ("Negative", np.negative),
    ],
)
def test_float16_unary_matches_numpy(op_type, reference):
    """The CPU ops take float types only: float16 on the GPU is checked against numpy."""
    x = np.random.RandomState(8).randn(257).astype(np.float16)
    workspace.ResetWorkspace()
    workspace.FeedBlob("x", x, gpu())
    workspace.RunOperatorOnce(core.CreateOperator(op_type, ["x"], ["y"], device_option=gpu()))
    y = workspace.FetchBlob("y")
    assert y.dtype == np.float16
    np.testing.assert_allclose(
        y.astype(np.float32), reference(x.astype(np.float32)), rtol=2e-3, atol=2e-3
    )


ACTIVATIONS = ["Relu", "Sigmoid", "Tanh"]


def activation_input(kind, shape, seed):
    x = np.random.RandomState(seed).randn(*shape).astype(np.float32)
    if kind == "Relu":
        x[np.abs(x) < 0.05] += 0.1  # away from the kink
    return x


@needs_gpu
@pytest.mark.parametrize("kind", ACTIVATIONS)
@pytest.mark.parametrize("shape", [(10,), (3, 4, 5), (2, 3, 4, 5)])
def test_activation_matches_cpu(kind, shape):
    x = activation_input(kind, shape, 2)
    op = core.CreateOperator(kind, ["X"], ["Y"], engine="CUDNN")
    check_cpu_gpu(op, [x], rtol=1e-5, atol=1e-6)
    check_gradient_cpu_gpu(op, [x], rtol=1e-5, atol=1e-6)


@needs_gpu
@pytest.mark.parametrize("kind", ACTIVATIONS)
def test_activation_in_place(kind):
    rng = np.random.RandomState(3)
    x = activation_input(kind, (4, 5), 3)
    check_cpu_gpu(
        core.CreateOperator(kind, ["X"], ["X"], engine="CUDNN"), [x], rtol=1e-5, atol=1e-6
    )
    y = rng.uniform(0.1, 0.9, (4, 5)).astype(np.float32)
    dy = rng.randn(4, 5).astype(np.float32)
    op = core.CreateOperator(kind + "Gradient", ["Y", "dY"], ["dY"], engine="CUDNN")
    check_cpu_gpu(op, [y, dy], rtol=1e-5, atol=1e-6)


@needs_gpu
@pytest.mark.parametrize("kind", ACTIVATIONS)
def test_empty_activation(kind):
    check_cpu_gpu(
        core.CreateOperator(kind, ["X"], ["Y"], engine="CUDNN"), [np.zeros((0, 3), np.float32)]
    )


@needs_gpu
@gpu_semantics
@pytest.mark.parametrize("kind", ACTIVATIONS + ["Softmax"])
def test_float16(kind):
    x = activation_input(kind, (4, 6), 4).astype(np.float16)
    workspace.ResetWorkspace()
    workspace.FeedBlob("X", x.astype(np.float32))
    workspace.RunOperatorOnce(core.CreateOperator(kind, ["X"], ["Y"]))
    expected = workspace.FetchBlob("Y")
    workspace.ResetWorkspace()
    workspace.FeedBlob("X", x, gpu())
    workspace.RunOperatorOnce(
        core.CreateOperator(kind, ["X"], ["Y"], engine="CUDNN", device_option=gpu())
    )
    y = workspace.FetchBlob("Y")
    assert y.dtype == np.float16
    np.testing.assert_allclose(y.astype(np.float32), expected, rtol=2e-3, atol=2e-3)
