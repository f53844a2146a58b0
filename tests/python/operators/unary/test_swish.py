"""Swish: the numpy reference (float, double, in place), its gradient by finite differences, the
three-input SwishGradient of upstream's nets, and device checks of both kernels."""
import numpy as np
from hypothesis import given, settings

from caffe2.python import core, workspace
import caffe2.python.hypothesis_test_util as hu

from device_check import check_cpu_gpu, check_gradient_cpu_gpu, needs_gpu

COVERED_CUDA_OPS = ["Swish", "SwishGradient"]

CPU = core.DeviceOption(0)


def swish(x):
    return x / (1 + np.exp(-x))


class TestSwish(hu.HypothesisTestCase):
    @given(X=hu.tensor(elements=hu.floats(min_value=-5, max_value=5)))
    @settings(deadline=None, max_examples=10)
    def test_reference_and_gradient(self, X):
        op = core.CreateOperator("Swish", ["X"], ["Y"])
        self.assertReferenceChecks(CPU, op, [X], lambda X: [swish(X)])
        self.assertGradientChecks(CPU, op, [X], 0, [0])
        in_place = core.CreateOperator("Swish", ["X"], ["X"])
        self.assertReferenceChecks(CPU, in_place, [X], lambda X: [swish(X)])

    def test_double_and_large_inputs(self):
        X = np.array([-100.0, -1.0, 0.0, 1.0, 100.0])
        op = core.CreateOperator("Swish", ["X"], ["Y"])
        self.assertReferenceChecks(CPU, op, [X], lambda X: [swish(X)])

    def test_gradient_op_takes_x_y_and_dy_as_upstream(self):
        op = core.CreateOperator("Swish", ["X"], ["Y"])
        grad_ops, _ = core.GradientRegistry.GetGradientForOp(op, ["Y_grad"])
        assert [(g.type, list(g.input)) for g in grad_ops] == [
            ("SwishGradient", ["X", "Y", "Y_grad"])
        ]
        X = np.linspace(-3, 3, 7).astype(np.float32)
        dY = np.linspace(1, 2, 7).astype(np.float32)
        workspace.ResetWorkspace()
        workspace.FeedBlob("X", X)
        workspace.FeedBlob("Y", swish(X))
        workspace.FeedBlob("Y_grad", dY)
        workspace.RunOperatorOnce(grad_ops[0])
        s = 1 / (1 + np.exp(-X))
        np.testing.assert_allclose(
            workspace.FetchBlob("X_grad"), dY * (s + X * s * (1 - s)), rtol=1e-5
        )


@needs_gpu
def test_device_check():
    X = np.random.RandomState(0).randn(4, 5).astype(np.float32)
    check_cpu_gpu(core.CreateOperator("Swish", ["X"], ["Y"]), [X])
    check_gradient_cpu_gpu(core.CreateOperator("Swish", ["X"], ["Y"]), [X])
