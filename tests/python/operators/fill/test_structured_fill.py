"""RangeFill, DiagonalFill and LengthsRangeFill: references, value types and bad input."""
import numpy as np

from caffe2.proto import caffe2_pb2
from caffe2.python import core, workspace
import caffe2.python.hypothesis_test_util as hu

CPU = core.DeviceOption(0)


def seeded(seed):
    d = caffe2_pb2.DeviceOption()
    d.random_seed = seed
    return d


def fill(op_type, seed=1, inputs=(), **kwargs):
    op = core.CreateOperator(
        op_type, [n for n, _ in inputs], ["Y"], device_option=seeded(seed), **kwargs
    )
    for name, value in inputs:
        workspace.FeedBlob(name, value)
    workspace.RunOperatorOnce(op)
    return workspace.FetchBlob("Y")


class TestStructuredFill(hu.HypothesisTestCase):
    def test_range_fill(self):
        np.testing.assert_array_equal(
            fill("RangeFill", shape=[2, 3]), np.arange(6, dtype=np.float32).reshape(2, 3)
        )

    def test_diagonal_fill(self):
        for shape in ([3, 5], [5, 3], [3, 3, 3]):
            want = np.zeros(shape, np.float32)
            np.fill_diagonal(want, 2.5)
            np.testing.assert_array_equal(fill("DiagonalFill", shape=shape, value=2.5), want)
        y = fill("DiagonalFill", shape=[2, 2], value=7)
        self.assertEqual(y.dtype, np.int64)
        np.testing.assert_array_equal(y, [[7, 0], [0, 7]])
        y = fill("DiagonalFill", shape=[2, 2], value=1, dtype=caffe2_pb2.TensorProto.INT32)
        self.assertEqual(y.dtype, np.int32)
        with self.assertRaisesRegex(RuntimeError, r"needs equal dims, got \(2, 3, 3\)"):
            fill("DiagonalFill", shape=[2, 3, 3], value=1.0)

    def test_lengths_range_fill(self):
        op = core.CreateOperator("LengthsRangeFill", ["L"], ["Y"])
        L = np.array([2, 0, 3, 1], np.int32)
        self.assertReferenceChecks(
            CPU, op, [L], lambda L: [np.concatenate([np.arange(l) for l in L]).astype(np.int32)]
        )
        self.assertRunOpRaises(
            CPU,
            op,
            [np.array([1, -1], np.int32)],
            exception=RuntimeError,
            regexp=r"^\[LengthsRangeFill\] length 1 is negative: -1",
        )
