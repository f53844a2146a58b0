"""AveragedLoss: numpy reference and finite-difference gradient; device checks against the CPU
kernel (the gradient with dLoss fed on the host included)."""
import numpy as np
import pytest
from hypothesis import given, settings

from caffe2.python import core
import caffe2.python.hypothesis_test_util as hu

from device_check import check_cpu_gpu, needs_gpu
from loss_inputs import check_with_gradient, rng

COVERED_CUDA_OPS = ["AveragedLoss", "AveragedLossGradient"]

CPU = core.DeviceOption(0)


class TestLosses(hu.HypothesisTestCase):
    @given(X=hu.tensor(min_dim=1, max_dim=3))
    @settings(deadline=None, max_examples=10)
    def test_averaged_loss(self, X):
        op = core.CreateOperator("AveragedLoss", ["X"], ["loss"])
        self.assertReferenceChecks(CPU, op, [X], lambda X: [np.array(X.mean(), dtype=np.float32)])
        self.assertGradientChecks(CPU, op, [X], 0, [0])


@needs_gpu
@pytest.mark.parametrize("shape", [(5, 3), (1000003,), (), (2, 3, 4)])
def test_averaged_loss(shape):
    r = rng(14)
    x = np.asarray(r.randn(*shape), np.float32)
    (loss,) = check_with_gradient(core.CreateOperator("AveragedLoss", ["X"], ["loss"]), [x])
    assert loss.shape == ()


@needs_gpu
def test_averaged_loss_gradient_with_dloss_on_the_host():
    op = core.CreateOperator("AveragedLossGradient", ["X", "dLoss"], ["dX"])
    check_cpu_gpu(
        op,
        [np.zeros((3, 4), np.float32), np.array(6.0, np.float32)],
        input_device_options={"dLoss": CPU},
    )
