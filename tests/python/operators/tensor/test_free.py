"""Free: frees its blobs in place only; device check that it releases a GPU tensor."""
import numpy as np
import pytest

from caffe2.python import core, workspace
import caffe2.python.hypothesis_test_util as hu

from device_check import gpu, needs_gpu

COVERED_CUDA_OPS = ["Free"]

CPU = core.DeviceOption(0)


class TestFree(hu.HypothesisTestCase):
    def test_frees_the_blobs(self):
        workspace.FeedBlob("a", np.ones(3, np.float32))
        workspace.FeedBlob("b", np.ones(2, np.int64))
        workspace.RunOperatorOnce(core.CreateOperator("Free", ["a", "b"], ["a", "b"]))
        self.assertTrue(workspace.HasBlob("a"))
        # An empty blob fetches as upstream's description of it.
        self.assertIn(b"uninitialized", workspace.FetchBlob("a"))
        # The next writer allocates again.
        workspace.RunOperatorOnce(
            core.CreateOperator("ConstantFill", [], ["a"], shape=[2], value=4.0)
        )
        np.testing.assert_array_equal(workspace.FetchBlob("a"), [4.0, 4.0])

    def test_must_be_in_place(self):
        workspace.FeedBlob("a", np.ones(3, np.float32))
        with pytest.raises(RuntimeError, match="in.?place|inplace"):
            workspace.RunOperatorOnce(core.CreateOperator("Free", ["a"], ["b"]))


@needs_gpu
def test_free_releases_a_gpu_tensor():
    workspace.ResetWorkspace()
    workspace.FeedBlob("x", np.ones(1000, np.float32), gpu())
    workspace.RunOperatorOnce(core.CreateOperator("Free", ["x"], ["x"], device_option=gpu()))
    assert workspace.HasBlob("x")
