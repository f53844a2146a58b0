"""NHWC2NCHW and NCHW2NHWC: references, gradients and a non-4-D input; device checks over shapes and
element types, gradients and the rank error."""
import numpy as np
import pytest
from hypothesis import given, settings

from caffe2.python import core
import caffe2.python.hypothesis_test_util as hu

from device_check import check_cpu_gpu, check_gradient_cpu_gpu, check_same_error, needs_gpu, values

COVERED_CUDA_OPS = ["NHWC2NCHW", "NCHW2NHWC"]

CPU = core.DeviceOption(0)


def rand(*shape, seed=0):
    return np.random.RandomState(seed).randn(*shape).astype(np.float32)


class TestOrderSwitch(hu.HypothesisTestCase):
    @given(X=hu.tensor(min_dim=4, max_dim=4))
    @settings(deadline=None, max_examples=5)
    def test_both_directions(self, X):
        op = core.CreateOperator("NHWC2NCHW", ["X"], ["Y"])
        self.assertReferenceChecks(CPU, op, [X], lambda X: [X.transpose(0, 3, 1, 2)])
        self.assertGradientChecks(CPU, op, [X], 0, [0])
        op = core.CreateOperator("NCHW2NHWC", ["X"], ["Y"])
        self.assertReferenceChecks(CPU, op, [X], lambda X: [X.transpose(0, 2, 3, 1)])
        self.assertGradientChecks(CPU, op, [X], 0, [0])

    def test_not_4d(self):
        op = core.CreateOperator("NCHW2NHWC", ["X"], ["Y"])
        self.assertRunOpRaises(
            CPU,
            op,
            [rand(2, 3)],
            exception=RuntimeError,
            regexp=r"^\[NCHW2NHWC\] X must be 4-D, got \(2, 3\)",
        )


@needs_gpu
@pytest.mark.parametrize("op_type,perm", [("NHWC2NCHW", (0, 3, 1, 2)), ("NCHW2NHWC", (0, 2, 3, 1))])
@pytest.mark.parametrize("shape", [(2, 5, 6, 3), (2, 9, 11, 64), (1, 1, 1, 1), (2, 0, 3, 4)])
@pytest.mark.parametrize("dtype", [np.float32, np.float16, np.int32])
def test_order_switch(op_type, perm, shape, dtype):
    op = core.CreateOperator(op_type, ["x"], ["y"])
    x = values(dtype, *shape)
    out = check_cpu_gpu(op, [x], rtol=0, atol=0)
    np.testing.assert_array_equal(out[0], np.transpose(x, perm))


@needs_gpu
def test_order_switch_gradient_and_rank_error():
    for op_type in ("NHWC2NCHW", "NCHW2NHWC"):
        check_gradient_cpu_gpu(
            core.CreateOperator(op_type, ["x"], ["y"]), [values(np.float32, 2, 20, 18, 17)]
        )
        check_same_error(
            core.CreateOperator(op_type, ["x"], ["y"]),
            [values(np.float32, 2, 3, 4)],
            r"X must be 4-D, got \(2, 3, 4\)",
        )
