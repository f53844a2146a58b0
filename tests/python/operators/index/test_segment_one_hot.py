"""SegmentOneHot: the numpy reference over random segmentations (empty segments too), repeated
indices, the errors, no gradient, and the device check (CUDA runs the CPU kernel)."""
import numpy as np
import pytest
from hypothesis import given, settings
import hypothesis.strategies as st

from caffe2.python import core, workspace
import caffe2.python.hypothesis_test_util as hu

from device_check import check_cpu_gpu, needs_gpu

COVERED_CUDA_OPS = ["SegmentOneHot"]

CPU = core.DeviceOption(0)


def segment_one_hot(lengths, indices, size):
    out = np.zeros((len(lengths), int(size)), np.float32)
    starts = np.concatenate([[0], np.cumsum(lengths)])
    for b in range(len(lengths)):
        out[b, indices[starts[b] : starts[b + 1]]] = 1
    return [out]


class TestSegmentOneHot(hu.HypothesisTestCase):
    @given(
        lengths=st.lists(st.integers(0, 4), min_size=0, max_size=5),
        size=st.integers(1, 6),
        seed=st.integers(0, 100),
    )
    @settings(deadline=None, max_examples=15)
    def test_reference(self, lengths, size, seed):
        lengths = np.array(lengths, np.int64)
        indices = np.random.RandomState(seed).randint(0, size, lengths.sum()).astype(np.int64)
        op = core.CreateOperator("SegmentOneHot", ["lengths", "indices", "size"], ["out"])
        self.assertReferenceChecks(
            CPU, op, [lengths, indices, np.array([size], np.int64)], segment_one_hot
        )


@pytest.mark.parametrize(
    "lengths,indices,message",
    [
        ([2, 1], [0, 1], "lengths sum to 3 but there are 2 indices"),
        ([1, 1], [0, 4], "index 4 at position 1 out of range for index_size 4"),
        ([-1, 2], [0], r"lengths\[0\] is negative: -1"),
    ],
)
def test_bad_inputs_are_clear_errors(lengths, indices, message):
    workspace.ResetWorkspace()
    workspace.FeedBlob("lengths", np.array(lengths, np.int64))
    workspace.FeedBlob("indices", np.array(indices, np.int64))
    workspace.FeedBlob("size", np.array([4], np.int64))
    op = core.CreateOperator("SegmentOneHot", ["lengths", "indices", "size"], ["out"])
    with pytest.raises(RuntimeError, match=message):
        workspace.RunOperatorOnce(op)


def test_no_gradient():
    op = core.CreateOperator("SegmentOneHot", ["lengths", "indices", "size"], ["out"])
    grad_ops, _ = core.GradientRegistry.GetGradientForOp(op, ["out_grad"])
    assert grad_ops == []


@needs_gpu
def test_device_check():
    op = core.CreateOperator("SegmentOneHot", ["lengths", "indices", "size"], ["out"])
    inputs = [np.array([2, 0, 3], np.int64), np.array([1, 3, 0, 0, 2], np.int64)]
    check_cpu_gpu(op, inputs + [np.array([4], np.int64)])
