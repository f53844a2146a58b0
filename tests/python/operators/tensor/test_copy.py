"""Copy, Alias and EnsureCPUOutput (with StopGradient, which acts the same on the CPU): references,
Copy's gradient and Alias sharing memory; device checks of the copies between host and GPU
(CopyCPUToGPU, CopyGPUToCPU, CopyOnDeviceLike)."""
import numpy as np
from hypothesis import given, settings

from caffe2.python import core, workspace
import caffe2.python.hypothesis_test_util as hu

from device_check import gpu, gpu_semantics, needs_gpu

COVERED_CUDA_OPS = [
    "Alias",
    "Copy",
    "CopyCPUToGPU",
    "CopyGPUToCPU",
    "CopyOnDeviceLike",
    "EnsureCPUOutput",
]

CPU = core.DeviceOption(0)


class TestCopyAndSum(hu.HypothesisTestCase):
    @given(X=hu.tensor())
    @settings(deadline=None, max_examples=10)
    def test_copy_and_alias(self, X):
        for op_type in ["Copy", "Alias", "StopGradient", "EnsureCPUOutput"]:
            op = core.CreateOperator(op_type, ["X"], ["Y"])
            self.assertReferenceChecks(CPU, op, [X], lambda X: [X])
        self.assertGradientChecks(CPU, core.CreateOperator("Copy", ["X"], ["Y"]), [X], 0, [0])

    def test_alias_shares_memory(self):
        workspace.FeedBlob("X", np.zeros(3, np.float32))
        workspace.RunOperatorOnce(core.CreateOperator("Alias", ["X"], ["Y"]))
        ws = workspace.C.Workspace.current
        ws.blobs["X"].tensor().data[0] = 9
        self.assertEqual(workspace.FetchBlob("Y")[0], 9)


@needs_gpu
@gpu_semantics
def test_copy_cpu_to_gpu_and_back():
    x = np.random.rand(3, 4).astype(np.float32)
    workspace.ResetWorkspace()
    workspace.FeedBlob("x", x)
    workspace.RunOperatorOnce(
        core.CreateOperator("CopyCPUToGPU", ["x"], ["x_gpu"], device_option=gpu())
    )
    workspace.RunOperatorOnce(
        core.CreateOperator("Copy", ["x_gpu"], ["y_gpu"], device_option=gpu())
    )
    workspace.RunOperatorOnce(
        core.CreateOperator("Alias", ["y_gpu"], ["z_gpu"], device_option=gpu())
    )
    workspace.RunOperatorOnce(
        core.CreateOperator("CopyGPUToCPU", ["z_gpu"], ["back"], device_option=gpu())
    )
    np.testing.assert_array_equal(workspace.FetchBlob("back"), x)
    workspace.RunOperatorOnce(
        core.CreateOperator("CopyOnDeviceLike", ["x_gpu", "y_gpu"], ["w"], device_option=gpu())
    )
    np.testing.assert_array_equal(workspace.FetchBlob("w"), x)
    workspace.RunOperatorOnce(
        core.CreateOperator("EnsureCPUOutput", ["x_gpu"], ["host"], device_option=gpu())
    )
    np.testing.assert_array_equal(workspace.FetchBlob("host"), x)
