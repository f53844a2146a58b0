"""Add: the gradient ops emitted, a type mismatch and the legacy broadcast's shape errors; device
checks of in-place Add and float16 broadcasting. The checks Add shares with Sub, Mul and Div are
in test_elementwise_ops.py."""
import unittest

import numpy as np

from caffe2.python import core, workspace
import caffe2.python.hypothesis_test_util as hu

from device_check import check_cpu_gpu, gpu, gpu_semantics, needs_gpu

COVERED_CUDA_OPS = ["Add"]

CPU = core.DeviceOption(0)


def inputs(a_shape, b_shape, seed=0, positive_b=False):
    rng = np.random.RandomState(seed)
    A = rng.randn(*a_shape).astype(np.float32)
    B = rng.randn(*b_shape).astype(np.float32)
    if positive_b:
        B = (np.abs(B) + 1.0).astype(np.float32)
    return A, B


class TestGradientOps(unittest.TestCase):
    def grad(self, op):
        return core.GradientRegistry.GetGradientForOp(op, ["C_grad"])

    def test_add(self):
        ops, g = self.grad(core.CreateOperator("Add", ["A", "B"], ["C"]))
        self.assertEqual((ops, g), ([], ["C_grad", "C_grad"]))
        ops, g = self.grad(core.CreateOperator("Add", ["A", "B"], ["C"], broadcast=1, axis=1))
        self.assertEqual([o.type for o in ops], ["SumReduceLike"])
        self.assertEqual((list(ops[0].input), list(ops[0].output)), (["C_grad", "B"], ["B_grad"]))
        self.assertEqual({a.name for a in ops[0].arg}, {"broadcast", "axis"})
        self.assertEqual(g, ["C_grad", "B_grad"])


class TestErrors(hu.HypothesisTestCase):
    def raises(self, op, A, B, regexp):
        self.assertRunOpRaises(CPU, op, [A, B], exception=RuntimeError, regexp=regexp)

    def test_type_mismatch(self):
        self.raises(
            core.CreateOperator("Add", ["A", "B"], ["C"]),
            np.ones(3, np.float32),
            np.ones(3, np.int32),
            r"^\[Add\] A has type float but B has int\n",
        )

    def test_broadcast_mismatches(self):
        A, B = inputs((2, 3, 4), (5,))
        self.raises(
            core.CreateOperator("Add", ["A", "B"], ["C"], broadcast=1),
            A,
            B,
            r"^\[Add\] B \(5,\) does not match A \(2, 3, 4\) at axis 2: "
            r"B dim 0 is 5 but A dim 2 is 4",
        )
        A, B = inputs((3, 4), (2, 3, 4))
        self.raises(
            core.CreateOperator("Add", ["A", "B"], ["C"], broadcast=1),
            A,
            B,
            r"B \(2, 3, 4\) has more dimensions than A \(3, 4\)",
        )
        A, B = inputs((2, 3, 4), (3, 4))
        self.raises(
            core.CreateOperator("Add", ["A", "B"], ["C"], broadcast=1, axis=2),
            A,
            B,
            r"broadcast axis 2 out of range \[0, 1\]",
        )
        self.raises(
            core.CreateOperator("Add", ["A", "B"], ["C"], broadcast=1, axis=1, axis_str="C"),
            A,
            B,
            r"args axis and axis_str cannot be used together",
        )
        self.raises(
            core.CreateOperator("Add", ["A", "B"], ["C"], broadcast=1, axis_str="X"),
            A,
            B,
            r"axis_str 'X' is not a letter of order 'NCHW'",
        )


@needs_gpu
def test_in_place_add():
    a = np.random.rand(10).astype(np.float32)
    b = np.random.rand(10).astype(np.float32)
    out = check_cpu_gpu(core.CreateOperator("Add", ["a", "b"], ["a"]), [a, b])
    np.testing.assert_allclose(out[0], a + b, rtol=1e-6)


@needs_gpu
@gpu_semantics
def test_float16_add_with_broadcast_matches_numpy():
    rng = np.random.RandomState(9)
    a = rng.randn(4, 3, 5).astype(np.float16)
    b = rng.randn(3, 5).astype(np.float16)
    workspace.ResetWorkspace()
    workspace.FeedBlob("a", a, gpu())
    workspace.FeedBlob("b", b, gpu())
    workspace.RunOperatorOnce(
        core.CreateOperator("Add", ["a", "b"], ["c"], broadcast=1, device_option=gpu())
    )
    np.testing.assert_allclose(
        workspace.FetchBlob("c").astype(np.float32),
        (a.astype(np.float32) + b.astype(np.float32)),
        rtol=2e-3,
        atol=2e-3,
    )
