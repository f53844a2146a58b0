"""Tile (arguments or inputs): reference, gradient and a bad axis; device checks over element types,
tiles and axis as inputs, gradients and errors."""
import hypothesis.strategies as st
import numpy as np
import pytest
from hypothesis import given, settings

from caffe2.python import core
import caffe2.python.hypothesis_test_util as hu

from device_check import check_cpu_gpu, check_gradient_cpu_gpu, check_same_error, needs_gpu, values

COVERED_CUDA_OPS = ["Tile", "TileGradient"]

CPU = core.DeviceOption(0)


def rand(*shape, seed=0):
    return np.random.RandomState(seed).randn(*shape).astype(np.float32)


class TestTile(hu.HypothesisTestCase):
    @given(tiles=st.integers(1, 3), axis=st.integers(-3, 2), as_inputs=st.booleans())
    @settings(deadline=None, max_examples=10)
    def test_reference_and_gradient(self, tiles, axis, as_inputs):
        X = rand(2, 3, 2)
        if as_inputs:
            op = core.CreateOperator("Tile", ["X", "t", "a"], ["Y"])
            inputs = [X, np.array([tiles], np.int32), np.array([axis], np.int32)]
        else:
            op = core.CreateOperator("Tile", ["X"], ["Y"], tiles=tiles, axis=axis)
            inputs = [X]
        reps = [1, 1, 1]
        reps[axis] = tiles
        self.assertReferenceChecks(CPU, op, inputs, lambda X, *u: [np.tile(X, reps)])
        self.assertGradientChecks(CPU, op, inputs, 0, [0])

    def test_bad_axis(self):
        op = core.CreateOperator("Tile", ["X"], ["Y"], tiles=2, axis=3)
        self.assertRunOpRaises(
            CPU,
            op,
            [rand(2, 3)],
            exception=RuntimeError,
            regexp=r"^\[Tile\] axis 3 out of range for a 2-d input",
        )


@needs_gpu
@pytest.mark.parametrize(
    "shape,tiles,axis",
    [
        ((2, 3), 2, 1),
        ((2, 3), 3, 0),
        ((2, 3, 4), 4, -1),
        ((2, 3, 4), 1, 1),
        ((2, 3), 0, 1),
        ((5,), 7, 0),
        ((8, 1), 300, 1),
    ],
)
@pytest.mark.parametrize("dtype", [np.float32, np.float16, np.int64, np.bool_])
def test_tile(shape, tiles, axis, dtype):
    op = core.CreateOperator("Tile", ["x"], ["y"], tiles=tiles, axis=axis)
    x = values(dtype, *shape)
    out = check_cpu_gpu(op, [x], rtol=0, atol=0)
    reps = [1] * len(shape)
    reps[axis] = tiles
    np.testing.assert_array_equal(out[0], np.tile(x, reps))


@needs_gpu
@pytest.mark.parametrize("on_host", [True, False])
def test_tile_params_as_inputs_and_gradients(on_host):
    op = core.CreateOperator("Tile", ["x", "tiles", "axis"], ["y"])
    inputs = [values(np.float32, 3, 4, 2), np.array([3], np.int32), np.array([1], np.int64)]
    where = {"tiles": CPU, "axis": CPU} if on_host else {}
    check_cpu_gpu(op, inputs, input_device_options=where)
    check_gradient_cpu_gpu(op, inputs, rtol=1e-6, atol=1e-6)
    check_gradient_cpu_gpu(
        core.CreateOperator("Tile", ["x"], ["y"], tiles=50, axis=0),
        [values(np.float32, 3, 7)],
        rtol=1e-6,
        atol=1e-6,
    )
    check_same_error(
        core.CreateOperator("TileGradient", ["dy"], ["dx"], tiles=4, axis=0),
        [values(np.float32, 6, 2)],
        "is not a multiple of tiles 4",
    )
