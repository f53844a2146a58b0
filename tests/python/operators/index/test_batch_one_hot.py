"""BatchOneHot and BatchBucketOneHot: numpy references over random columns and value lists (empty
lists too), upstream's documented bucket example, the errors, no gradients, and device checks
(CUDA runs the CPU kernels)."""
import numpy as np
import pytest
from hypothesis import given, settings
import hypothesis.strategies as st

from caffe2.python import core, workspace
import caffe2.python.hypothesis_test_util as hu

from device_check import check_cpu_gpu, needs_gpu

COVERED_CUDA_OPS = ["BatchOneHot", "BatchBucketOneHot"]

CPU = core.DeviceOption(0)


def batch_one_hot(data, lengths, values):
    starts = np.concatenate([[0], np.cumsum(lengths)])
    cols = [
        data[:, j : j + 1] == values[None, starts[j] : starts[j + 1]] for j in range(len(lengths))
    ]
    return [np.concatenate(cols, axis=1).astype(data.dtype).reshape(len(data), starts[-1])]


def batch_bucket_one_hot(data, lengths, boundaries):
    starts = np.concatenate([[0], np.cumsum(lengths)])
    cols = []
    for j in range(len(lengths)):
        b = boundaries[starts[j] : starts[j + 1]]
        bucket = np.searchsorted(b, data[:, j], side="left")
        cols.append(np.eye(len(b) + 1, dtype=np.float32)[bucket])
    return [np.concatenate(cols, axis=1).reshape(len(data), int(starts[-1]) + len(lengths))]


class TestBatchOneHot(hu.HypothesisTestCase):
    @given(
        n=st.integers(0, 4),
        lengths=st.lists(st.integers(0, 3), min_size=1, max_size=4),
        dtype=st.sampled_from([np.int32, np.int64]),
        seed=st.integers(0, 100),
    )
    @settings(deadline=None, max_examples=15)
    def test_reference(self, n, lengths, dtype, seed):
        rng = np.random.RandomState(seed)
        data = rng.randint(0, 4, (n, len(lengths))).astype(dtype)
        values = rng.randint(0, 4, sum(lengths)).astype(dtype)
        lengths = np.array(lengths, np.int32)
        op = core.CreateOperator("BatchOneHot", ["data", "lengths", "values"], ["out"])
        self.assertReferenceChecks(CPU, op, [data, lengths, values], batch_one_hot)

    @given(
        n=st.integers(0, 4),
        lengths=st.lists(st.integers(0, 3), min_size=1, max_size=4),
        seed=st.integers(0, 100),
    )
    @settings(deadline=None, max_examples=15)
    def test_bucket_reference(self, n, lengths, seed):
        rng = np.random.RandomState(seed)
        data = rng.randint(0, 5, (n, len(lengths))).astype(np.float32)  # ties with boundaries
        starts = np.concatenate([[0], np.cumsum(lengths)])
        boundaries = np.concatenate(
            [np.sort(rng.randint(0, 5, k)) for k in lengths] + [np.zeros(0)]
        ).astype(np.float32)
        assert len(boundaries) == starts[-1]
        lengths = np.array(lengths, np.int32)
        op = core.CreateOperator("BatchBucketOneHot", ["data", "lengths", "b"], ["out"])
        self.assertReferenceChecks(CPU, op, [data, lengths, boundaries], batch_bucket_one_hot)

    def test_upstream_bucket_example(self):
        workspace.ResetWorkspace()
        workspace.FeedBlob("data", np.array([[2, 3], [4, 1], [2, 5]], np.float32))
        workspace.FeedBlob("lengths", np.array([2, 3], np.int32))
        workspace.FeedBlob("b", np.array([0.1, 2.5, 1, 3.1, 4.5], np.float32))
        op = core.CreateOperator("BatchBucketOneHot", ["data", "lengths", "b"], ["out"])
        workspace.RunOperatorOnce(op)
        np.testing.assert_array_equal(
            workspace.FetchBlob("out"),
            [[0, 1, 0, 0, 1, 0, 0], [0, 0, 1, 1, 0, 0, 0], [0, 1, 0, 0, 0, 0, 1]],
        )
        for op_type in ("BatchOneHot", "BatchBucketOneHot"):
            grad_ops, _ = core.GradientRegistry.GetGradientForOp(
                core.CreateOperator(op_type, ["data", "lengths", "b"], ["out"]), ["out_grad"]
            )
            assert grad_ops == []


@pytest.mark.parametrize(
    "op_type,data,lengths,values,message",
    [
        (
            "BatchOneHot",
            np.zeros((2, 2), np.int32),
            [1, 1],
            np.zeros(3, np.int32),
            r"values must be 1-d with 2 entries \(the sum of lengths\)",
        ),
        (
            "BatchOneHot",
            np.zeros((2, 2), np.int32),
            [1],
            np.zeros(1, np.int32),
            r"lengths must be 1-d with 2 entries \(one per column of data\)",
        ),
        (
            "BatchOneHot",
            np.zeros((2, 2), np.int32),
            [1, 1],
            np.zeros(2, np.int64),
            "values must have data's type int, got long",
        ),
        (
            "BatchOneHot",
            np.zeros(2, np.int32),
            [1, 1],
            np.zeros(2, np.int32),
            r"data must be 2-d \(N, D\)",
        ),
        (
            "BatchBucketOneHot",
            np.zeros((2, 1), np.float32),
            [2],
            np.array([2, 1], np.float32),
            "the boundaries of column 0 are not sorted",
        ),
    ],
)
def test_bad_inputs_are_clear_errors(op_type, data, lengths, values, message):
    workspace.ResetWorkspace()
    workspace.FeedBlob("data", data)
    workspace.FeedBlob("lengths", np.array(lengths, np.int32))
    workspace.FeedBlob("values", values)
    with pytest.raises(RuntimeError, match=message):
        workspace.RunOperatorOnce(
            core.CreateOperator(op_type, ["data", "lengths", "values"], ["out"])
        )


@needs_gpu
def test_device_check():
    lengths = np.array([2, 1], np.int32)
    data = np.array([[1, 2], [3, 5], [1, 1]], np.int64)
    check_cpu_gpu(
        core.CreateOperator("BatchOneHot", ["d", "l", "v"], ["out"]),
        [data, lengths, np.array([1, 3, 5], np.int64)],
    )
    check_cpu_gpu(
        core.CreateOperator("BatchBucketOneHot", ["d", "l", "v"], ["out"]),
        [data.astype(np.float32), lengths, np.array([1.5, 2.5, 3.0], np.float32)],
    )
