"""DotProduct: the numpy reference over 1-d to 3-d inputs, its gradient by finite differences for
both inputs, the gradient op's two outputs, empty batches, the errors, and the device check (CUDA
runs the CPU kernel)."""
import numpy as np
import pytest
from hypothesis import given, settings

from caffe2.python import core, workspace
import caffe2.python.hypothesis_test_util as hu

from device_check import check_cpu_gpu, check_gradient_cpu_gpu, needs_gpu

COVERED_CUDA_OPS = ["DotProduct", "DotProductGradient"]

CPU = core.DeviceOption(0)


def dot_rows(X, Y):
    n = X.shape[0]
    return [(X.reshape(n, -1).astype(np.float64) * Y.reshape(n, -1)).sum(axis=1).astype(np.float32)]


class TestDotProduct(hu.HypothesisTestCase):
    @given(XY=hu.tensors(n=2, min_dim=1, max_dim=3))
    @settings(deadline=None, max_examples=12)
    def test_reference_and_gradients(self, XY):
        X, Y = XY
        op = core.CreateOperator("DotProduct", ["X", "Y"], ["Z"])
        self.assertReferenceChecks(CPU, op, [X, Y], dot_rows)
        self.assertGradientChecks(CPU, op, [X, Y], 0, [0])
        self.assertGradientChecks(CPU, op, [X, Y], 1, [0])

    def test_gradient_op_gives_both_inputs(self):
        op = core.CreateOperator("DotProduct", ["X", "Y"], ["Z"])
        grad_ops, grads = core.GradientRegistry.GetGradientForOp(op, ["Z_grad"])
        assert [(g.type, list(g.input), list(g.output)) for g in grad_ops] == [
            ("DotProductGradient", ["X", "Y", "Z_grad"], ["X_grad", "Y_grad"])
        ]

    def test_empty_batch(self):
        workspace.ResetWorkspace()
        workspace.FeedBlob("X", np.zeros((0, 3), np.float32))
        workspace.FeedBlob("Y", np.zeros((0, 3), np.float32))
        workspace.RunOperatorOnce(core.CreateOperator("DotProduct", ["X", "Y"], ["Z"]))
        assert workspace.FetchBlob("Z").shape == (0,)


@pytest.mark.parametrize(
    "X,Y,message",
    [
        (
            np.zeros((2, 3), np.float32),
            np.zeros((2, 4), np.float32),
            r"X \(2, 3\) and Y \(2, 4\) must have the same shape",
        ),
        (np.zeros((2, 3), np.int32), np.zeros((2, 3), np.int32), "X and Y must be float tensors"),
        (np.array(1.0, np.float32), np.array(2.0, np.float32), "at least one dimension"),
    ],
)
def test_bad_inputs_are_clear_errors(X, Y, message):
    workspace.ResetWorkspace()
    workspace.FeedBlob("X", X)
    workspace.FeedBlob("Y", Y)
    with pytest.raises(RuntimeError, match=message):
        workspace.RunOperatorOnce(core.CreateOperator("DotProduct", ["X", "Y"], ["Z"]))


@needs_gpu
def test_device_check():
    rng = np.random.RandomState(0)
    X, Y = rng.randn(4, 6).astype(np.float32), rng.randn(4, 6).astype(np.float32)
    check_cpu_gpu(core.CreateOperator("DotProduct", ["X", "Y"], ["Z"]), [X, Y])
    check_gradient_cpu_gpu(core.CreateOperator("DotProduct", ["X", "Y"], ["Z"]), [X, Y])
