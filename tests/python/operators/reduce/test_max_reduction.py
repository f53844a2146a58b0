"""RowwiseMax and ColwiseMax: numpy references over (batch, M, N), gradients by finite differences
(ties kept apart) and the tie rule of the gradient op (every tied maximum gets dY), the errors, and
device checks (CUDA runs the CPU kernels)."""
import numpy as np
import pytest
from hypothesis import given, settings
import hypothesis.strategies as st

from caffe2.python import core, workspace
import caffe2.python.hypothesis_test_util as hu

from device_check import check_cpu_gpu, check_gradient_cpu_gpu, needs_gpu

COVERED_CUDA_OPS = ["RowwiseMax", "RowwiseMaxGradient", "ColwiseMax", "ColwiseMaxGradient"]

CPU = core.DeviceOption(0)
AXIS = {"RowwiseMax": 2, "ColwiseMax": 1}


def distinct_values(shape, seed):
    """A permutation scaled apart, so no two elements tie and finite differences see one max."""
    n = int(np.prod(shape))
    return (np.random.RandomState(seed).permutation(n).reshape(shape) * 0.1).astype(np.float32)


class TestMaxReduction(hu.HypothesisTestCase):
    @given(
        op_type=st.sampled_from(sorted(AXIS)),
        shape=st.tuples(st.integers(1, 3), st.integers(1, 4), st.integers(1, 4)),
        seed=st.integers(0, 50),
    )
    @settings(deadline=None, max_examples=12)
    def test_reference_and_gradient(self, op_type, shape, seed):
        X = distinct_values(shape, seed)
        op = core.CreateOperator(op_type, ["X"], ["Y"])
        self.assertReferenceChecks(CPU, op, [X], lambda X: [X.max(axis=AXIS[op_type])])
        self.assertGradientChecks(CPU, op, [X], 0, [0], stepsize=1e-3)

    def test_tied_maxima_each_get_the_gradient(self):
        X = np.array([[[1.0, 3.0, 3.0], [2.0, 2.0, 0.0]]], dtype=np.float32)
        dY = {"RowwiseMax": np.array([[10.0, 20.0]]), "ColwiseMax": np.array([[5.0, 6.0, 7.0]])}
        expected = {
            "RowwiseMax": [[[0, 10, 10], [20, 20, 0]]],
            "ColwiseMax": [[[0, 6, 7], [5, 0, 0]]],
        }
        for op_type in AXIS:
            workspace.ResetWorkspace()
            workspace.FeedBlob("X", X)
            workspace.FeedBlob("Y_grad", dY[op_type].astype(np.float32))
            op = core.CreateOperator(op_type, ["X"], ["Y"])
            workspace.RunOperatorOnce(op)
            grad_ops, _ = core.GradientRegistry.GetGradientForOp(op, ["Y_grad"])
            assert [(g.type, list(g.input)) for g in grad_ops] == [
                (op_type + "Gradient", ["X", "Y", "Y_grad"])
            ]
            workspace.RunOperatorOnce(grad_ops[0])
            np.testing.assert_array_equal(workspace.FetchBlob("X_grad"), expected[op_type])

    def test_empty_batch_and_rows(self):
        X = np.zeros((0, 2, 3), np.float32)
        for op_type, shape in (("RowwiseMax", (0, 2)), ("ColwiseMax", (0, 3))):
            workspace.ResetWorkspace()
            workspace.FeedBlob("X", X)
            workspace.RunOperatorOnce(core.CreateOperator(op_type, ["X"], ["Y"]))
            assert workspace.FetchBlob("Y").shape == shape


@pytest.mark.parametrize("op_type", sorted(AXIS))
def test_a_2d_input_is_refused(op_type):
    workspace.ResetWorkspace()
    workspace.FeedBlob("X", np.zeros((2, 3), np.float32))
    with pytest.raises(RuntimeError, match=r"X must be 3-d \(batch, M, N\)"):
        workspace.RunOperatorOnce(core.CreateOperator(op_type, ["X"], ["Y"]))


@needs_gpu
def test_device_check():
    X = distinct_values((2, 3, 4), 0)
    for op_type in AXIS:
        check_cpu_gpu(core.CreateOperator(op_type, ["X"], ["Y"]), [X])
        check_gradient_cpu_gpu(core.CreateOperator(op_type, ["X"], ["Y"]), [X])
