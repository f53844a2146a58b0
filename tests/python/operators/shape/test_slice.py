"""Slice: reference, gradient, int ranges and bad ranges; device checks over ranges and element
types, ranges as inputs on the host or the GPU, the gradient and errors."""
import hypothesis.strategies as st
import numpy as np
import pytest
from hypothesis import given, settings

from caffe2.python import core
import caffe2.python.hypothesis_test_util as hu

from device_check import check_cpu_gpu, check_gradient_cpu_gpu, check_same_error, needs_gpu, values

COVERED_CUDA_OPS = ["Slice", "SliceGradient"]

CPU = core.DeviceOption(0)


def rand(*shape, seed=0):
    return np.random.RandomState(seed).randn(*shape).astype(np.float32)


def py_range(start, end, dim):
    return slice(dim + 1 + start if start < 0 else start, dim + 1 + end if end < 0 else end)


class TestSlice(hu.HypothesisTestCase):
    @given(
        starts=st.sampled_from([[0], [1, 0], [-3, 1], [0, 0, 2]]),
        ends=st.sampled_from([[-1], [3, -1], [-2, 3], [2, -2, 4]]),
        as_inputs=st.booleans(),
    )
    @settings(deadline=None, max_examples=10)
    def test_reference_and_gradient(self, starts, ends, as_inputs):
        n = min(len(starts), len(ends))
        starts, ends = starts[:n], ends[:n]
        X = rand(4, 3, 5)
        if as_inputs:
            op = core.CreateOperator("Slice", ["X", "s", "e"], ["Y"])
            inputs = [X, np.array(starts, np.int32), np.array(ends, np.int32)]
        else:
            op = core.CreateOperator("Slice", ["X"], ["Y"], starts=starts, ends=ends)
            inputs = [X]

        def ref(X, *unused):
            return [
                X[tuple(py_range(s, e, X.shape[i]) for i, (s, e) in enumerate(zip(starts, ends)))]
            ]

        self.assertReferenceChecks(CPU, op, inputs, ref)
        self.assertGradientChecks(CPU, op, inputs, 0, [0])

    def test_int_and_bad_ranges(self):
        X = np.arange(12, dtype=np.int64).reshape(3, 4)
        op = core.CreateOperator("Slice", ["X"], ["Y"], starts=[1, 1], ends=[3, -2])
        self.assertReferenceChecks(CPU, op, [X], lambda X: [X[1:3, 1:3]])
        op = core.CreateOperator("Slice", ["X"], ["Y"], starts=[0, 3], ends=[2, 6])
        self.assertRunOpRaises(
            CPU,
            op,
            [X],
            exception=RuntimeError,
            regexp=r"^\[Slice\] slice \[3, 6\) of dim 1 is out of range for X \(3, 4\)",
        )
        op = core.CreateOperator("Slice", ["X"], ["Y"], starts=[0, 1], ends=[2])
        self.assertRunOpRaises(
            CPU, op, [X], exception=RuntimeError, regexp="starts has 2 entries but ends has 1"
        )


@needs_gpu
@pytest.mark.parametrize(
    "shape,starts,ends",
    [
        ((4, 5), [1, 0], [3, -1]),
        ((4, 5), [0, 2], [-1, -2]),
        ((4, 5, 6), [1, -4], [-2, -1]),
        ((3, 4, 5), [0, 0, 1], [3, 4, 4]),
        ((3, 4, 5), [2], [2]),
        ((100, 300), [7, 13], [90, 290]),
    ],
)
@pytest.mark.parametrize("dtype", [np.float32, np.float16, np.int64, np.bool_])
def test_slice_ranges_and_types(shape, starts, ends, dtype):
    op = core.CreateOperator("Slice", ["x"], ["y"], starts=starts, ends=ends)
    check_cpu_gpu(op, [values(dtype, *shape)], rtol=0, atol=0)


@needs_gpu
@pytest.mark.parametrize("index_dtype", [np.int32, np.int64])
@pytest.mark.parametrize("on_host", [True, False])
def test_slice_ranges_as_inputs_and_gradient(index_dtype, on_host):
    op = core.CreateOperator("Slice", ["x", "starts", "ends"], ["y"])
    inputs = [
        values(np.float32, 4, 5, 3),
        np.array([1, -4], index_dtype),
        np.array([-1, 4], index_dtype),
    ]
    where = {"starts": CPU, "ends": CPU} if on_host else {}
    check_cpu_gpu(op, inputs, input_device_options=where)
    check_gradient_cpu_gpu(op, inputs)


@needs_gpu
def test_slice_gradient_and_errors():
    check_gradient_cpu_gpu(
        core.CreateOperator("Slice", ["x"], ["y"], starts=[1, 2], ends=[3, -2]),
        [values(np.float32, 4, 6)],
    )
    check_same_error(
        core.CreateOperator("Slice", ["x"], ["y"], starts=[3], ends=[2]),
        [values(np.float32, 4, 6)],
        r"slice \[3, 2\) of dim 0 is out of range",
    )
    check_same_error(
        core.CreateOperator("SliceGradient", ["x", "dy"], ["dx"], starts=[0], ends=[2]),
        [values(np.float32, 4, 6), values(np.float32, 3, 6)],
        "does not match the slice",
    )
