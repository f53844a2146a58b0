"""LengthsGather: the numpy reference over random segmentations (empty segments, repeated and
empty INDICES, rows of several dims, any item type), the errors, no gradient, and the device check
(CUDA runs the CPU kernel)."""
import numpy as np
import pytest
from hypothesis import given, settings
import hypothesis.strategies as st

from caffe2.python import core, workspace
import caffe2.python.hypothesis_test_util as hu

from device_check import check_cpu_gpu, needs_gpu

COVERED_CUDA_OPS = ["LengthsGather"]

CPU = core.DeviceOption(0)


def lengths_gather(items, lengths, indices):
    starts = np.concatenate([[0], np.cumsum(lengths)]).astype(np.int64)
    parts = [items[starts[i] : starts[i + 1]] for i in indices]
    return [np.concatenate(parts) if parts else items[:0]]


class TestLengthsGather(hu.HypothesisTestCase):
    @given(
        lengths=st.lists(st.integers(0, 3), min_size=1, max_size=5),
        row_shape=st.lists(st.integers(1, 3), min_size=0, max_size=2),
        n_indices=st.integers(0, 6),
        seed=st.integers(0, 100),
        dtype=st.sampled_from([np.float32, np.int64]),
    )
    @settings(deadline=None, max_examples=15)
    def test_reference(self, lengths, row_shape, n_indices, seed, dtype):
        rng = np.random.RandomState(seed)
        items = (rng.randn(sum(lengths), *row_shape) * 10).astype(dtype)
        indices = rng.randint(0, len(lengths), n_indices).astype(np.int64)
        op = core.CreateOperator("LengthsGather", ["items", "lengths", "indices"], ["out"])
        self.assertReferenceChecks(
            CPU, op, [items, np.array(lengths, np.int32), indices], lengths_gather
        )

    def test_strings(self):
        items = np.array([b"a", b"b", b"c", b"d"], dtype=object)
        op = core.CreateOperator("LengthsGather", ["items", "lengths", "indices"], ["out"])
        lengths, indices = np.array([1, 3], np.int32), np.array([1, 0], np.int32)
        workspace.ResetWorkspace()
        for name, v in zip(["items", "lengths", "indices"], [items, lengths, indices]):
            workspace.FeedBlob(name, v)
        workspace.RunOperatorOnce(op)
        assert list(workspace.FetchBlob("out")) == [b"b", b"c", b"d", b"a"]


@pytest.mark.parametrize(
    "lengths,indices,message",
    [
        ([2, 1], [0], "LENGTHS sum to 3 but ITEMS has 4 rows"),
        ([2, 2], [2], "index 2 at position 0 out of range for 2 segments"),
        ([5, -1], [0], r"LENGTHS\[1\] is negative: -1"),
    ],
)
def test_bad_inputs_are_clear_errors(lengths, indices, message):
    workspace.ResetWorkspace()
    workspace.FeedBlob("items", np.zeros((4, 2), np.float32))
    workspace.FeedBlob("lengths", np.array(lengths, np.int32))
    workspace.FeedBlob("indices", np.array(indices, np.int32))
    op = core.CreateOperator("LengthsGather", ["items", "lengths", "indices"], ["out"])
    with pytest.raises(RuntimeError, match=message):
        workspace.RunOperatorOnce(op)
    grad_ops, _ = core.GradientRegistry.GetGradientForOp(op, ["out_grad"])
    assert grad_ops == []


@needs_gpu
def test_device_check():
    items = np.arange(12, dtype=np.float32).reshape(6, 2)
    op = core.CreateOperator("LengthsGather", ["items", "lengths", "indices"], ["out"])
    check_cpu_gpu(op, [items, np.array([1, 2, 3], np.int32), np.array([2, 0, 2], np.int32)])
