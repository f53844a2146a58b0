"""LengthsToShape: (len, common length) for equal lengths, an empty input, unequal lengths and
wrong types refused, no gradient, and the device check (CUDA runs the CPU kernel)."""
import numpy as np
import pytest

from caffe2.python import core, workspace
import caffe2.python.hypothesis_test_util as hu

from device_check import check_cpu_gpu, needs_gpu

COVERED_CUDA_OPS = ["LengthsToShape"]

CPU = core.DeviceOption(0)


class TestLengthsToShape(hu.HypothesisTestCase):
    def test_reference(self):
        op = core.CreateOperator("LengthsToShape", ["lengths"], ["shape"])
        for lengths in ([3, 3, 3, 3], [7], []):
            L = np.array(lengths, np.int32)
            expected = [np.array([len(L), L[0] if len(L) else 0], np.int32)]
            self.assertReferenceChecks(CPU, op, [L], lambda L: expected)


@pytest.mark.parametrize(
    "lengths,message",
    [
        (np.array([2, 2, 3], np.int32), r"lengths\[0\] is 2 but lengths\[2\] is 3"),
        (np.array([2, 2], np.int64), "lengths must be a 1-d int32 tensor"),
    ],
)
def test_bad_inputs_are_clear_errors(lengths, message):
    workspace.ResetWorkspace()
    workspace.FeedBlob("lengths", lengths)
    op = core.CreateOperator("LengthsToShape", ["lengths"], ["shape"])
    with pytest.raises(RuntimeError, match=message):
        workspace.RunOperatorOnce(op)
    assert core.GradientRegistry.GetGradientForOp(op, ["shape_grad"])[0] == []


@needs_gpu
def test_device_check():
    op = core.CreateOperator("LengthsToShape", ["lengths"], ["shape"])
    check_cpu_gpu(op, [np.array([4, 4, 4], np.int32)])
