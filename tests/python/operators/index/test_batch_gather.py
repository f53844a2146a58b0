"""BatchGather: the numpy reference (take along axis 1) for index tensors of 0 to 2 dims, int32
and int64 indices and any DATA type, the dense gradient with repeated indices added up (finite
differences too), the errors, and device checks (CUDA runs the CPU kernels)."""
import numpy as np
import pytest
from hypothesis import given, settings
import hypothesis.strategies as st

from caffe2.python import core, workspace
import caffe2.python.hypothesis_test_util as hu

from device_check import check_cpu_gpu, check_gradient_cpu_gpu, needs_gpu

COVERED_CUDA_OPS = ["BatchGather", "BatchGatherGradient"]

CPU = core.DeviceOption(0)


def batch_gather(data, indices):
    return [np.take(data, indices, axis=1)]


class TestBatchGather(hu.HypothesisTestCase):
    @given(
        shape=st.lists(st.integers(1, 4), min_size=2, max_size=4),
        index_shape=st.lists(st.integers(0, 3), min_size=0, max_size=2),
        index_type=st.sampled_from([np.int32, np.int64]),
        seed=st.integers(0, 100),
    )
    @settings(deadline=None, max_examples=15)
    def test_reference_and_gradient(self, shape, index_shape, index_type, seed):
        rng = np.random.RandomState(seed)
        data = rng.randn(*shape).astype(np.float32)
        indices = rng.randint(0, shape[1], index_shape).astype(index_type)
        op = core.CreateOperator("BatchGather", ["data", "indices"], ["out"])
        self.assertReferenceChecks(CPU, op, [data, indices], batch_gather)
        if indices.size:
            self.assertGradientChecks(CPU, op, [data, indices], 0, [0])

    def test_other_data_types(self):
        op = core.CreateOperator("BatchGather", ["data", "indices"], ["out"])
        indices = np.array([[2, 0], [0, 0]], np.int64)
        for dtype in (np.int32, np.float64, np.bool_):
            data = (np.arange(12).reshape(2, 3, 2) % 5).astype(dtype)
            self.assertReferenceChecks(CPU, op, [data, indices], batch_gather)

    def test_repeated_indices_add_up_in_the_gradient(self):
        workspace.ResetWorkspace()
        workspace.FeedBlob("data", np.zeros((2, 3), np.float32))
        workspace.FeedBlob("indices", np.array([1, 1, 2], np.int32))
        workspace.FeedBlob("out_grad", np.array([[1, 2, 3], [4, 5, 6]], np.float32))
        op = core.CreateOperator("BatchGather", ["data", "indices"], ["out"])
        grad_ops, _ = core.GradientRegistry.GetGradientForOp(op, ["out_grad"])
        assert [(g.type, list(g.input)) for g in grad_ops] == [
            ("BatchGatherGradient", ["data", "indices", "out_grad"])
        ]
        workspace.RunOperatorOnce(grad_ops[0])
        np.testing.assert_array_equal(workspace.FetchBlob("data_grad"), [[0, 3, 3], [0, 9, 6]])


@pytest.mark.parametrize(
    "data,indices,message",
    [
        (
            np.zeros((2, 3), np.float32),
            np.array([3], np.int32),
            r"index 3 at position 0 out of range for DATA \(2, 3\) \(axis 1\)",
        ),
        (np.zeros((2, 3), np.float32), np.array([-1], np.int64), "index -1 at position 0"),
        (
            np.zeros(3, np.float32),
            np.array([0], np.int32),
            "DATA must have at least two dimensions",
        ),
        (
            np.zeros((2, 3), np.float32),
            np.array([0.0], np.float32),
            "INDICES must be an int32 or int64 tensor",
        ),
    ],
)
def test_bad_inputs_are_clear_errors(data, indices, message):
    workspace.ResetWorkspace()
    workspace.FeedBlob("data", data)
    workspace.FeedBlob("indices", indices)
    with pytest.raises(RuntimeError, match=message):
        workspace.RunOperatorOnce(core.CreateOperator("BatchGather", ["data", "indices"], ["out"]))


@needs_gpu
def test_device_check():
    rng = np.random.RandomState(0)
    data = rng.randn(3, 5, 2).astype(np.float32)
    indices = np.array([[4, 0], [1, 1]], np.int32)
    op = core.CreateOperator("BatchGather", ["data", "indices"], ["out"])
    check_cpu_gpu(op, [data, indices])
    check_gradient_cpu_gpu(op, [data, indices])
