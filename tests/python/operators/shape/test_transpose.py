"""Transpose: reference, gradient, element types, row copies, bad axes; device checks over axes,
ranks and element types, large tiled transposes, the gradient and errors."""
import hypothesis.strategies as st
import numpy as np
import pytest
from hypothesis import given, settings

from caffe2.python import core
import caffe2.python.hypothesis_test_util as hu

from device_check import check_cpu_gpu, check_gradient_cpu_gpu, check_same_error, needs_gpu, values

COVERED_CUDA_OPS = ["Transpose"]

CPU = core.DeviceOption(0)


class TestTranspose(hu.HypothesisTestCase):
    @given(X=hu.tensor(min_dim=1, max_dim=4), seed=st.integers(0, 100), default=st.booleans())
    @settings(deadline=None, max_examples=10)
    def test_reference_and_gradient(self, X, seed, default):
        axes = None if default else list(np.random.RandomState(seed).permutation(X.ndim))
        op = core.CreateOperator("Transpose", ["X"], ["Y"], **({} if default else {"axes": axes}))
        self.assertReferenceChecks(CPU, op, [X], lambda X: [np.transpose(X, axes)])
        self.assertGradientChecks(CPU, op, [X], 0, [0])

    def test_element_types_and_row_copies(self):
        for dtype in [np.int8, np.float16, np.int32, np.float64, np.bool_]:
            X = (np.arange(60) % 5).reshape(3, 4, 5).astype(dtype)
            for axes in ([1, 0, 2], [2, 1, 0], [0, 2, 1]):
                op = core.CreateOperator("Transpose", ["X"], ["Y"], axes=axes)
                self.assertReferenceChecks(CPU, op, [X], lambda X: [X.transpose(axes)])
        S = np.array([[b"a", b"bb"], [b"ccc", b"d"]], dtype=object)
        op = core.CreateOperator("Transpose", ["X"], ["Y"])
        self.assertReferenceChecks(CPU, op, [S], lambda S: [S.T])

    def test_int_and_bad_axes(self):
        X = np.arange(24, dtype=np.int32).reshape(2, 3, 4)
        op = core.CreateOperator("Transpose", ["X"], ["Y"], axes=[1, 2, 0])
        self.assertReferenceChecks(CPU, op, [X], lambda X: [X.transpose(1, 2, 0)])
        op = core.CreateOperator("Transpose", ["X"], ["Y"], axes=[0, 0, 1])
        self.assertRunOpRaises(
            CPU,
            op,
            [X],
            exception=RuntimeError,
            regexp=r"^\[Transpose\] axes is not a permutation of 0..2",
        )
        op = core.CreateOperator("Transpose", ["X"], ["Y"], axes=[1, 0])
        self.assertRunOpRaises(
            CPU, op, [X], exception=RuntimeError, regexp="axes has 2 entries but X has 3 dims"
        )


@needs_gpu
@pytest.mark.parametrize(
    "shape,axes",
    [
        ((5,), None),
        ((3, 4), None),
        ((3, 4), [1, 0]),
        ((2, 3, 4), [2, 0, 1]),
        ((2, 3, 4), [0, 2, 1]),
        ((2, 3, 4), [1, 0, 2]),
        ((2, 3, 4, 5), [3, 1, 0, 2]),
        ((2, 1, 3, 1, 4), [4, 3, 2, 1, 0]),
        ((2, 3, 4), [-1, 0, 1]),
        ((2, 3, 2, 3, 2, 3), [5, 3, 1, 4, 2, 0]),
        ((3, 0, 2), [2, 1, 0]),
        ((), None),
    ],
)
@pytest.mark.parametrize("dtype", [np.float32, np.float16, np.int64, np.bool_, np.uint8])
def test_transpose_axes_ranks_and_types(shape, axes, dtype):
    args = {} if axes is None else dict(axes=axes)
    op = core.CreateOperator("Transpose", ["x"], ["y"], **args)
    x = values(dtype, *shape)
    out = check_cpu_gpu(op, [x], rtol=0, atol=0)
    np.testing.assert_array_equal(out[0], np.transpose(x, axes))


@needs_gpu
@pytest.mark.parametrize(
    "shape,axes",
    [
        ((64, 96), [1, 0]),  # a tiled 2-D transpose with ragged edges
        ((4, 50, 70), [0, 2, 1]),  # batched
        ((3, 40, 40, 33), [0, 3, 1, 2]),  # NHWC -> NCHW, many channels
        ((2, 17, 300, 8), [2, 1, 0, 3]),  # rows of 8 move together
    ],
)
@pytest.mark.parametrize("dtype", [np.float32, np.float16, np.float64])
def test_transpose_large(shape, axes, dtype):
    op = core.CreateOperator("Transpose", ["x"], ["y"], axes=axes)
    x = values(dtype, *shape)
    out = check_cpu_gpu(op, [x], rtol=0, atol=0)
    np.testing.assert_array_equal(out[0], np.transpose(x, axes))


@needs_gpu
def test_transpose_gradient_and_errors():
    op = core.CreateOperator("Transpose", ["x"], ["y"], axes=[1, 2, 0])
    check_gradient_cpu_gpu(op, [values(np.float32, 2, 3, 4)])
    check_same_error(
        core.CreateOperator("Transpose", ["x"], ["y"], axes=[0, 0, 1]),
        [values(np.float32, 2, 3, 4)],
        "not a permutation",
    )
    check_same_error(
        core.CreateOperator("Transpose", ["x"], ["y"], axes=[1, 0]),
        [values(np.float32, 2, 3, 4)],
        "axes has 2 entries but X has 3 dims",
    )
