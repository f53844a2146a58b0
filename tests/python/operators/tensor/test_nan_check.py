"""NanCheck: the identity on finite tensors (reference, in place, upstream's extra inputs), its
pass-through gradient, the error that names the blob and the first non-finite value, and a device
check (CUDA runs the CPU kernel)."""
import numpy as np
import pytest
from hypothesis import given, settings

from caffe2.python import core, workspace
import caffe2.python.hypothesis_test_util as hu

from device_check import check_cpu_gpu, needs_gpu

COVERED_CUDA_OPS = ["NanCheck"]

CPU = core.DeviceOption(0)


class TestNanCheck(hu.HypothesisTestCase):
    @given(X=hu.tensor(), extra=hu.tensor())
    @settings(deadline=None, max_examples=10)
    def test_identity_and_gradient(self, X, extra):
        op = core.CreateOperator("NanCheck", ["X", "extra"], ["Y"])
        self.assertReferenceChecks(CPU, op, [X, extra], lambda X, extra: [X])
        self.assertGradientChecks(CPU, op, [X, extra], 0, [0])
        in_place = core.CreateOperator("NanCheck", ["X"], ["X"])
        self.assertReferenceChecks(CPU, in_place, [X], lambda X: [X])

    def test_gradient_is_a_nan_check_of_dy(self):
        op = core.CreateOperator("NanCheck", ["X"], ["Y"])
        grad_ops, _ = core.GradientRegistry.GetGradientForOp(op, ["Y_grad"])
        assert [(g.type, list(g.input), list(g.output)) for g in grad_ops] == [
            ("NanCheck", ["Y_grad"], ["X_grad"])
        ]


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("bad", [np.nan, np.inf, -np.inf])
def test_a_non_finite_value_is_an_error_that_names_it(dtype, bad):
    workspace.ResetWorkspace()
    X = np.ones((2, 3), dtype)
    X[1, 1], X[1, 2] = bad, bad
    workspace.FeedBlob("X", X)
    workspace.FeedBlob("Y", np.zeros(1, dtype))
    with pytest.raises(
        RuntimeError,
        match=r"\[NanCheck\] blob 'X' \(2, 3\) holds 2 NaN or infinite value\(s\), the first "
        r"-?(nan|inf) at flat index 4",
    ):
        workspace.RunOperatorOnce(core.CreateOperator("NanCheck", ["X"], ["Y"]))
    np.testing.assert_array_equal(workspace.FetchBlob("Y"), np.zeros(1, dtype))  # not written
    workspace.FeedBlob("I", np.ones(2, np.int32))
    with pytest.raises(RuntimeError, match=r"unsupported type int \(supported: float, double\)"):
        workspace.RunOperatorOnce(core.CreateOperator("NanCheck", ["I"], ["I"]))


@needs_gpu
def test_device_check():
    X = np.random.RandomState(0).randn(3, 4).astype(np.float32)
    check_cpu_gpu(core.CreateOperator("NanCheck", ["X"], ["Y"]), [X])
