"""Dropout and DropoutGrad: test-mode identity, training mask statistics with a fixed seed, the scaling,
gradients in both modes, in-place use, shape inference and errors."""
import hypothesis.strategies as st
import numpy as np
from hypothesis import given, settings

from caffe2.proto import caffe2_pb2
from caffe2.python import core, workspace
import caffe2.python.hypothesis_test_util as hu

CPU = core.DeviceOption(0)


def seeded(seed):
    d = caffe2_pb2.DeviceOption()
    d.device_type = 0
    d.random_seed = seed
    return d


class TestDropout(hu.HypothesisTestCase):
    @given(X=hu.tensor(min_dim=1, max_dim=3), ratio=st.sampled_from([0.0, 0.3, 0.5]), in_place=st.booleans())
    @settings(deadline=None, max_examples=10)
    def test_test_mode_is_identity(self, X, ratio, in_place):
        op = core.CreateOperator("Dropout", ["X"], ["X" if in_place else "Y"], ratio=ratio, is_test=1)
        self.assertReferenceChecks(CPU, op, [X], lambda X: [X])
        if not in_place:
            self.assertGradientChecks(CPU, op, [X], 0, [0])
        g, _ = core.GradientRegistry.GetGradientForOp(op, [op.output[0] + "_grad"])
        self.assertEqual(g[0].type, "DropoutGrad")
        self.assertEqual(list(g[0].input), [op.output[0] + "_grad"])

    def test_training_mask_statistics_with_fixed_seed(self):
        X = np.random.RandomState(0).rand(200, 100).astype(np.float32) + 0.5
        op = core.CreateOperator("Dropout", ["X"], ["Y", "mask"], ratio=0.3, is_test=0, device_option=seeded(7))
        workspace.FeedBlob("X", X)
        workspace.RunOperatorOnce(op)
        Y, mask = workspace.FetchBlob("Y"), workspace.FetchBlob("mask")
        self.assertEqual(mask.dtype, np.bool_)
        self.assertEqual(mask.shape, X.shape)
        self.assertAlmostEqual(mask.mean(), 0.7, delta=0.01)
        np.testing.assert_allclose(Y, np.where(mask, X / 0.7, 0), rtol=1e-6)
        workspace.RunOperatorOnce(op)
        np.testing.assert_array_equal(workspace.FetchBlob("mask"), mask)  # same seed, same mask
        other = core.CreateOperator("Dropout", ["X"], ["Y", "mask2"], ratio=0.3, device_option=seeded(8))
        workspace.RunOperatorOnce(other)
        self.assertFalse(np.array_equal(workspace.FetchBlob("mask2"), mask))

    def test_training_gradient_and_in_place(self):
        X = np.random.randn(4, 5).astype(np.float32)
        op = core.CreateOperator("Dropout", ["X"], ["Y", "mask"], ratio=0.5, device_option=seeded(3))
        self.assertGradientChecks(seeded(3), op, [X], 0, [0])
        g, _ = core.GradientRegistry.GetGradientForOp(op, ["Y_grad", None])
        self.assertEqual(g[0].type, "DropoutGrad")
        self.assertEqual(list(g[0].input), ["Y_grad", "mask"])
        workspace.FeedBlob("X", X)
        workspace.RunOperatorOnce(core.CreateOperator("Dropout", ["X"], ["X", "m"], ratio=0.5,
                                                      device_option=seeded(3)))
        m = workspace.FetchBlob("m")
        np.testing.assert_allclose(workspace.FetchBlob("X"), np.where(m, 2 * X, 0), rtol=1e-6)
        dY = np.random.randn(4, 5).astype(np.float32)
        gop = core.CreateOperator("DropoutGrad", ["dY", "m"], ["dY"], ratio=0.5)
        self.assertReferenceChecks(CPU, gop, [dY, m], lambda dY, m: [np.where(m, 2 * dY, 0)])

    def test_ratio_zero_keeps_everything(self):
        X = np.random.randn(3, 4).astype(np.float32)
        op = core.CreateOperator("Dropout", ["X"], ["Y", "mask"], ratio=0.0)
        self.assertReferenceChecks(CPU, op, [X], lambda X: [X, np.ones(X.shape, bool)])

    def test_errors(self):
        X = np.zeros(3, np.float32)
        op = core.CreateOperator("Dropout", ["X"], ["Y"], is_test=0)
        self.assertRunOpRaises(CPU, op, [X], exception=RuntimeError,
                               regexp=r"^\[Dropout\] training \(is_test=0\) needs the mask output, got 1 output")
        op = core.CreateOperator("Dropout", ["X"], ["Y", "m"], ratio=1.0)
        self.assertRunOpRaises(CPU, op, [X], exception=RuntimeError, regexp=r"ratio must be in \[0, 1\), got 1")
        gop = core.CreateOperator("DropoutGrad", ["dY", "m"], ["dX"])
        self.assertRunOpRaises(CPU, gop, [X, np.zeros(2, bool)], exception=RuntimeError,
                               regexp=r"^\[DropoutGrad\] mask must be bool and shaped like dY \(3,\)")
