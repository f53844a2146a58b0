"""Device checks of the CUDA ArgMax / ArgMin (operators/index/arg_max_op.cu): axes, keepdims,
types and ties (the first extremum wins on both devices)."""
import numpy as np
import pytest

from caffe2.python import core

from cuda_test_util import check_cpu_gpu, needs_gpu

COVERED_OPS = ["ArgMax", "ArgMin"]
pytestmark = needs_gpu


@pytest.mark.parametrize("op_type", COVERED_OPS)
@pytest.mark.parametrize("axis,keepdims", [(-1, True), (0, False), (1, True), (2, False)])
@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int32, np.int64])
def test_arg_max_min(op_type, axis, keepdims, dtype):
    x = np.random.RandomState(15).randint(-3, 4, (4, 5, 6)).astype(dtype)  # many ties
    out = check_cpu_gpu(core.CreateOperator(op_type, ["x"], ["y"], axis=axis, keepdims=keepdims),
                        [x], rtol=0, atol=0)
    assert out[0].dtype == np.int64
    reference = (np.argmax if op_type == "ArgMax" else np.argmin)(x, axis=axis)
    np.testing.assert_array_equal(out[0].reshape(reference.shape), reference)
