"""ArgMax and ArgMin: references, ties and a bad axis; device checks against the CPU kernel over
axes, keepdims and types (the first extremum wins on both devices)."""
import hypothesis.strategies as st
import numpy as np
import pytest
from hypothesis import given, settings

from caffe2.python import core
import caffe2.python.hypothesis_test_util as hu

from device_check import check_cpu_gpu, needs_gpu

COVERED_CUDA_OPS = ["ArgMax", "ArgMin"]

CPU = core.DeviceOption(0)


class TestArgMaxMin(hu.HypothesisTestCase):
    @given(X=hu.tensor(min_dim=1, max_dim=3), axis=st.integers(-3, 2), keepdims=st.booleans())
    @settings(deadline=None, max_examples=10)
    def test_reference(self, X, axis, keepdims):
        axis = axis % X.ndim
        for op_type, fn in [("ArgMax", np.argmax), ("ArgMin", np.argmin)]:
            op = core.CreateOperator(op_type, ["X"], ["Y"], axis=axis, keepdims=keepdims)

            def ref(X):
                r = fn(X, axis=axis)
                return [np.expand_dims(r, axis) if keepdims else r]

            self.assertReferenceChecks(CPU, op, [X], ref)

    def test_ties_and_bad_axis(self):
        X = np.array([[1, 3, 3], [2, 2, 0]], np.int32)
        op = core.CreateOperator("ArgMax", ["X"], ["Y"], keepdims=0)
        self.assertReferenceChecks(CPU, op, [X], lambda X: [np.array([1, 0], np.int64)])
        op = core.CreateOperator("ArgMin", ["X"], ["Y"], axis=2)
        self.assertRunOpRaises(
            CPU,
            op,
            [X],
            exception=RuntimeError,
            regexp=r"^\[ArgMin\] axis 2 out of range for a 2-d input",
        )


@needs_gpu
@pytest.mark.parametrize("op_type", COVERED_CUDA_OPS)
@pytest.mark.parametrize("axis,keepdims", [(-1, True), (0, False), (1, True), (2, False)])
@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int32, np.int64])
def test_arg_max_min(op_type, axis, keepdims, dtype):
    x = np.random.RandomState(15).randint(-3, 4, (4, 5, 6)).astype(dtype)  # many ties
    out = check_cpu_gpu(
        core.CreateOperator(op_type, ["x"], ["y"], axis=axis, keepdims=keepdims),
        [x],
        rtol=0,
        atol=0,
    )
    assert out[0].dtype == np.int64
    reference = (np.argmax if op_type == "ArgMax" else np.argmin)(x, axis=axis)
    np.testing.assert_array_equal(out[0].reshape(reference.shape), reference)
