"""Sign: the numpy reference for every numeric type (in place too), no gradient (upstream's
SHOULD_NOT_DO_GRADIENT), and the device check."""
import numpy as np
import pytest
from hypothesis import given, settings

from caffe2.python import core
import caffe2.python.hypothesis_test_util as hu

from device_check import check_cpu_gpu, needs_gpu

COVERED_CUDA_OPS = ["Sign"]

CPU = core.DeviceOption(0)


class TestSign(hu.HypothesisTestCase):
    @given(X=hu.tensor())
    @settings(deadline=None, max_examples=10)
    def test_reference(self, X):
        X[..., 0] = 0  # zero maps to zero
        self.assertReferenceChecks(
            CPU, core.CreateOperator("Sign", ["X"], ["Y"]), [X], lambda X: [np.sign(X)]
        )
        self.assertReferenceChecks(
            CPU, core.CreateOperator("Sign", ["X"], ["X"]), [X], lambda X: [np.sign(X)]
        )

    def test_integer_and_double_types(self):
        op = core.CreateOperator("Sign", ["X"], ["Y"])
        for dtype in (np.int32, np.int64, np.float64):
            X = np.array([-7, 0, 3], dtype=dtype)
            self.assertReferenceChecks(CPU, op, [X], lambda X: [np.sign(X)])

    def test_asking_for_a_gradient_is_an_error(self):
        op = core.CreateOperator("Sign", ["X"], ["Y"])
        with pytest.raises(Exception, match="Sign"):
            core.GradientRegistry.GetGradientForOp(op, ["Y_grad"])


@needs_gpu
def test_device_check():
    for dtype in (np.float32, np.int32):
        X = (np.random.RandomState(0).randn(4, 5) * 3).astype(dtype)
        check_cpu_gpu(core.CreateOperator("Sign", ["X"], ["Y"]), [X])
