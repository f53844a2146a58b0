"""ReduceFrontSum/Mean and ReduceBackSum/Mean with num_reduce_dim and optional lengths: references,
finite-difference gradients, gradient ops, errors; device checks against the CPU kernels."""
import unittest

import numpy as np
import pytest

from caffe2.python import core
import caffe2.python.hypothesis_test_util as hu

from device_check import check_cpu_gpu, check_gradient_cpu_gpu, needs_gpu

COVERED_CUDA_OPS = [
    "ReduceFrontSum",
    "ReduceFrontMean",
    "ReduceBackSum",
    "ReduceBackMean",
    "ReduceFrontSumGradient",
    "ReduceFrontMeanGradient",
    "ReduceBackSumGradient",
    "ReduceBackMeanGradient",
]

CPU = core.DeviceOption(0)

OPS = ["ReduceFrontSum", "ReduceFrontMean", "ReduceBackSum", "ReduceBackMean"]


def reference(op_type, X, num, lengths=None):
    front = "Front" in op_type
    mean = "Mean" in op_type
    split = num if front else X.ndim - num
    rows = int(np.prod(X.shape[:split]))
    M = X.reshape(rows, -1)
    if front:
        M = M.T  # one row per output element
    counts = np.full(M.shape[0], M.shape[1]) if lengths is None else lengths
    out = np.array([M[k, : counts[k]].sum() for k in range(M.shape[0])], np.float32)
    if mean:
        out = np.where(counts > 0, out / np.maximum(counts, 1), 0).astype(np.float32)
    return out.reshape(X.shape[split:] if front else X.shape[:split])


class TestReduceFrontBack(hu.HypothesisTestCase):
    def test_reference_and_gradient(self):
        X = np.random.RandomState(0).randn(2, 3, 4).astype(np.float32)
        for op_type in OPS:
            for num in (0, 1, 2, 3):
                op = core.CreateOperator(op_type, ["X"], ["Y"], num_reduce_dim=num)
                self.assertReferenceChecks(
                    CPU, op, [X], lambda X: [reference(op_type, X, num)], threshold=1e-4, atol=1e-5
                )
            for num in (1, 2):
                op = core.CreateOperator(op_type, ["X"], ["Y"], num_reduce_dim=num)
                self.assertGradientChecks(CPU, op, [X], 0, [0])

    def test_default_reduces_one_dim(self):
        X = np.random.RandomState(1).randn(3, 4).astype(np.float32)
        ops = {
            "ReduceFrontSum": X.sum(0),
            "ReduceFrontMean": X.mean(0),
            "ReduceBackSum": X.sum(1),
            "ReduceBackMean": X.mean(1),
        }
        for op_type, ref in ops.items():
            op = core.CreateOperator(op_type, ["X"], ["Y"])
            self.assertReferenceChecks(CPU, op, [X], lambda X: [ref], threshold=1e-5)

    def test_lengths(self):
        X = np.random.RandomState(2).randn(3, 4).astype(np.float32)
        for op_type in OPS:
            lengths = np.array([3, 0, 1, 2] if "Front" in op_type else [4, 0, 2], np.int32)
            op = core.CreateOperator(op_type, ["X", "L"], ["Y"])
            self.assertReferenceChecks(
                CPU, op, [X, lengths], lambda X, L: [reference(op_type, X, 1, L)], threshold=1e-5
            )
            self.assertGradientChecks(CPU, op, [X, lengths], 0, [0])

    def test_gradient_ops(self):
        for op_type in OPS:
            op = core.CreateOperator(op_type, ["X"], ["Y"])
            ops, _ = core.GradientRegistry.GetGradientForOp(op, ["Y_grad"])
            self.assertEqual(
                [(o.type, list(o.input), list(o.output)) for o in ops],
                [(op_type + "Gradient", ["Y_grad", "X"], ["X_grad"])],
            )
            op = core.CreateOperator(op_type, ["X", "L"], ["Y"], num_reduce_dim=2)
            ops, g = core.GradientRegistry.GetGradientForOp(op, ["Y_grad"])
            self.assertEqual(list(ops[0].input), ["Y_grad", "X", "L"])
            self.assertEqual(ops[0].arg[0].i, 2)
            self.assertIsNone(g[1])

    def test_errors(self):
        X = np.zeros((3, 4), np.float32)
        op = core.CreateOperator("ReduceFrontSum", ["X"], ["Y"], num_reduce_dim=3)
        self.assertRunOpRaises(
            CPU,
            op,
            [X],
            exception=RuntimeError,
            regexp=r"^\[ReduceFrontSum\] num_reduce_dim 3 out of range for X \(3, 4\)",
        )
        op = core.CreateOperator("ReduceBackMean", ["X", "L"], ["Y"])
        self.assertRunOpRaises(
            CPU,
            op,
            [X, np.array([1, 2], np.int32)],
            exception=RuntimeError,
            regexp=r"^\[ReduceBackMean\] lengths has 2 elements but the output has 3",
        )
        self.assertRunOpRaises(
            CPU,
            op,
            [X, np.array([1, 5, 2], np.int32)],
            exception=RuntimeError,
            regexp=r"^\[ReduceBackMean\] lengths\[1\] = 5 is outside \[0, 4\]",
        )
        self.assertRunOpRaises(
            CPU,
            op,
            [X, np.array([1, 2, 2], np.int64)],
            exception=RuntimeError,
            regexp=r"^\[ReduceBackMean\] lengths must be int32, got long",
        )
        op = core.CreateOperator("ReduceFrontMean", ["X"], ["Y"])
        self.assertRunOpRaises(
            CPU,
            op,
            [X.astype(np.float64)],
            exception=RuntimeError,
            regexp=r"^\[ReduceFrontMean\] unsupported type double",
        )


R = np.random.RandomState(0)


@needs_gpu
@pytest.mark.parametrize(
    "op_type", ["ReduceFrontSum", "ReduceFrontMean", "ReduceBackSum", "ReduceBackMean"]
)
@pytest.mark.parametrize(
    "shape,num_reduce_dim",
    [((4, 3, 5), 1), ((4, 3, 5), 2), ((7,), 1), ((300, 700), 1), ((2, 0, 3), 1)],
)
def test_reduce_front_back(op_type, shape, num_reduce_dim):
    x = R.randn(*shape).astype(np.float32)
    op = core.CreateOperator(op_type, ["x"], ["y"], num_reduce_dim=num_reduce_dim)
    check_cpu_gpu(op, [x], rtol=1e-4, atol=1e-4)
    if 0 not in shape:
        check_gradient_cpu_gpu(op, [x], rtol=1e-5, atol=1e-6)


@needs_gpu
@pytest.mark.parametrize("op_type", ["ReduceFrontSum", "ReduceBackMean"])
def test_reduce_with_lengths_runs_the_cpu_kernel(op_type):
    x = R.randn(4, 3).astype(np.float32)
    lengths = np.array([2, 0, 4] if op_type.startswith("ReduceFront") else [1, 3, 0, 2], np.int32)
    op = core.CreateOperator(op_type, ["x", "lengths"], ["y"])
    check_cpu_gpu(op, [x, lengths], rtol=1e-5, atol=1e-6)


if __name__ == "__main__":
    unittest.main()
