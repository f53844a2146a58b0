"""Where: reference and bad input; device checks against the CPU kernel over element types,
broadcast_on_rows, in place and errors."""
import hypothesis.strategies as st
import numpy as np
import pytest
from hypothesis import given, settings

from caffe2.python import core
import caffe2.python.hypothesis_test_util as hu

from device_check import check_cpu_gpu, check_same_error, needs_gpu, values

COVERED_CUDA_OPS = ["Where"]

CPU = core.DeviceOption(0)


def rand(*shape, seed=0):
    return np.random.RandomState(seed).randn(*shape).astype(np.float32)


class TestWhere(hu.HypothesisTestCase):
    @given(seed=st.integers(0, 100), in_place=st.sampled_from([None, "X", "Y"]))
    @settings(deadline=None, max_examples=6)
    def test_reference(self, seed, in_place):
        rng = np.random.RandomState(seed)
        C = rng.rand(3, 4) > 0.5
        X, Y = rand(3, 4, seed=seed), rand(3, 4, seed=seed + 1)
        op = core.CreateOperator("Where", ["C", "X", "Y"], [in_place or "Z"])
        self.assertReferenceChecks(CPU, op, [C, X, Y], lambda C, X, Y: [np.where(C, X, Y)])
        rows = rng.rand(3) > 0.5
        op = core.CreateOperator("Where", ["C", "X", "Y"], ["Z"], broadcast_on_rows=1)
        self.assertReferenceChecks(
            CPU, op, [rows, X, Y], lambda C, X, Y: [np.where(C[:, None], X, Y)]
        )

    def test_bad_input(self):
        op = core.CreateOperator("Where", ["C", "X", "Y"], ["Z"])
        self.assertRunOpRaises(
            CPU,
            op,
            [np.ones(3, bool), rand(3, 4), rand(3, 4)],
            exception=RuntimeError,
            regexp=r"^\[Where\] C \(3,\) must have the dims of X \(3, 4\)",
        )
        self.assertRunOpRaises(
            CPU,
            op,
            [np.ones(3, np.int32), rand(3), rand(3)],
            exception=RuntimeError,
            regexp=r"C must be a bool tensor",
        )
        with self.assertRaisesRegex(Exception, "should not have a gradient"):
            core.GradientRegistry.GetGradientForOp(op, ["Z_grad"])


R = np.random.RandomState(1)


@needs_gpu
@pytest.mark.parametrize(
    "dtype", [np.float32, np.float16, np.float64, np.int64, np.uint8, np.bool_]
)
@pytest.mark.parametrize(
    "shape,on_rows", [((3, 4), False), ((5, 2, 3), True), ((7,), True), ((200, 300), False)]
)
def test_where(dtype, shape, on_rows):
    c = R.rand(*(shape[:1] if on_rows else shape)) > 0.5
    x, y = values(dtype, *shape), values(dtype, *shape)
    args = dict(broadcast_on_rows=1) if on_rows else {}
    out = check_cpu_gpu(
        core.CreateOperator("Where", ["c", "x", "y"], ["z"], **args), [c, x, y], rtol=0, atol=0
    )
    mask = c.reshape(c.shape + (1,) * (len(shape) - c.ndim))
    np.testing.assert_array_equal(out[0], np.where(mask, x, y))


@needs_gpu
def test_where_in_place_and_errors():
    c = R.rand(4, 3) > 0.5
    x, y = values(np.float32, 4, 3), values(np.float32, 4, 3)
    check_cpu_gpu(core.CreateOperator("Where", ["c", "x", "y"], ["x"]), [c, x, y])
    check_cpu_gpu(core.CreateOperator("Where", ["c", "x", "y"], ["y"]), [c, x, y])
    check_same_error(
        core.CreateOperator("Where", ["c", "x", "y"], ["z"]),
        [c.astype(np.int32), x, y],
        "C must be a bool tensor",
    )
    check_same_error(
        core.CreateOperator("Where", ["c", "x", "y"], ["z"], broadcast_on_rows=1),
        [c, x, y],
        "must hold one value per row",
    )
