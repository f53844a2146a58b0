"""Flatten, FlattenToVec and ResizeLike: references, gradients and bad input; device checks of
ResizeLike. The device checks Flatten shares with the other dims-only ops are in
test_shape_ops.py."""
import hypothesis.strategies as st
import numpy as np
from hypothesis import given, settings

from caffe2.python import core
import caffe2.python.hypothesis_test_util as hu

from device_check import check_cpu_gpu, check_same_error, needs_gpu, values

COVERED_CUDA_OPS = ["ResizeLike"]

CPU = core.DeviceOption(0)


def rand(*shape, seed=0):
    return np.random.RandomState(seed).randn(*shape).astype(np.float32)


class TestFlatten(hu.HypothesisTestCase):
    @given(X=hu.tensor(min_dim=1, max_dim=4), axis=st.integers(0, 4))
    @settings(deadline=None, max_examples=10)
    def test_flatten(self, X, axis):
        axis = min(axis, X.ndim)
        op = core.CreateOperator("Flatten", ["X"], ["Y"], axis=axis)
        rows = int(np.prod(X.shape[:axis]))
        self.assertReferenceChecks(CPU, op, [X], lambda X: [X.reshape(rows, -1 if rows else 0)])
        self.assertGradientChecks(CPU, op, [X], 0, [0])

    @given(X=hu.tensor(min_dim=1, max_dim=4))
    @settings(deadline=None, max_examples=5)
    def test_flatten_to_vec(self, X):
        op = core.CreateOperator("FlattenToVec", ["X"], ["Y"])
        self.assertReferenceChecks(CPU, op, [X], lambda X: [X.reshape(-1)])
        self.assertGradientChecks(CPU, op, [X], 0, [0])

    def test_resize_like(self):
        X, like = rand(6), rand(2, 3, seed=1)
        op = core.CreateOperator("ResizeLike", ["X", "like"], ["X"])
        self.assertReferenceChecks(CPU, op, [X, like], lambda X, like: [X.reshape(2, 3)])
        op = core.CreateOperator("ResizeLike", ["X", "like"], ["Y"])
        self.assertRunOpRaises(
            CPU,
            op,
            [rand(5), like],
            exception=RuntimeError,
            regexp=r"^\[ResizeLike\] X \(5,\) has 5 elements but the shape source \(2, 3\) has 6",
        )

    def test_flatten_bad_axis(self):
        op = core.CreateOperator("Flatten", ["X"], ["Y"], axis=3)
        self.assertRunOpRaises(
            CPU,
            op,
            [rand(2, 3)],
            exception=RuntimeError,
            regexp=r"axis 3 out of range for X \(2, 3\)",
        )


@needs_gpu
def test_resize_like_and_in_place():
    check_cpu_gpu(
        core.CreateOperator("ResizeLike", ["x", "like"], ["y"]),
        [values(np.int32, 6, 4), values(np.float32, 2, 3, 4)],
        rtol=0,
        atol=0,
    )
    check_cpu_gpu(
        core.CreateOperator("ResizeLike", ["x", "like"], ["x"]),
        [values(np.float16, 6, 4), values(np.float32, 24)],
        rtol=0,
        atol=0,
    )
    check_cpu_gpu(
        core.CreateOperator("ResizeLike", ["x", "like"], ["y"]),
        [values(np.float32, 6, 4), values(np.float32, 4, 6)],
        input_device_options={"like": CPU},
    )
    check_same_error(
        core.CreateOperator("ResizeLike", ["x", "like"], ["y"]),
        [values(np.float32, 6, 4), values(np.float32, 5)],
        "has 24 elements",
    )
