"""Dropout and DropoutGrad: test-mode identity, training mask statistics with a fixed seed, the
scaling, gradients in both modes, in-place use, shape inference and errors; device checks of the
CUDA Dropout (mask and output agree, the kept fraction, seeds, test mode) and DropoutGrad against
the CPU op for a given mask."""
import hypothesis.strategies as st
import numpy as np
import pytest
from hypothesis import given, settings

from caffe2.proto import caffe2_pb2
from caffe2.python import core, workspace
import caffe2.python.hypothesis_test_util as hu

from device_check import check_cpu_gpu, gpu, needs_gpu

COVERED_CUDA_OPS = ["Dropout", "DropoutGrad"]

CPU = core.DeviceOption(0)


def seeded(seed):
    d = caffe2_pb2.DeviceOption()
    d.device_type = 0
    d.random_seed = seed
    return d


class TestDropout(hu.HypothesisTestCase):
    @given(
        X=hu.tensor(min_dim=1, max_dim=3),
        ratio=st.sampled_from([0.0, 0.3, 0.5]),
        in_place=st.booleans(),
    )
    @settings(deadline=None, max_examples=10)
    def test_test_mode_is_identity(self, X, ratio, in_place):
        op = core.CreateOperator(
            "Dropout", ["X"], ["X" if in_place else "Y"], ratio=ratio, is_test=1
        )
        self.assertReferenceChecks(CPU, op, [X], lambda X: [X])
        if not in_place:
            self.assertGradientChecks(CPU, op, [X], 0, [0])
        g, _ = core.GradientRegistry.GetGradientForOp(op, [op.output[0] + "_grad"])
        self.assertEqual(g[0].type, "DropoutGrad")
        self.assertEqual(list(g[0].input), [op.output[0] + "_grad"])

    def test_training_mask_statistics_with_fixed_seed(self):
        X = np.random.RandomState(0).rand(200, 100).astype(np.float32) + 0.5
        op = core.CreateOperator(
            "Dropout", ["X"], ["Y", "mask"], ratio=0.3, is_test=0, device_option=seeded(7)
        )
        workspace.FeedBlob("X", X)
        workspace.RunOperatorOnce(op)
        Y, mask = workspace.FetchBlob("Y"), workspace.FetchBlob("mask")
        self.assertEqual(mask.dtype, np.bool_)
        self.assertEqual(mask.shape, X.shape)
        self.assertAlmostEqual(mask.mean(), 0.7, delta=0.01)
        np.testing.assert_allclose(Y, np.where(mask, X / 0.7, 0), rtol=1e-6)
        workspace.RunOperatorOnce(op)
        np.testing.assert_array_equal(workspace.FetchBlob("mask"), mask)  # same seed, same mask
        other = core.CreateOperator(
            "Dropout", ["X"], ["Y", "mask2"], ratio=0.3, device_option=seeded(8)
        )
        workspace.RunOperatorOnce(other)
        self.assertFalse(np.array_equal(workspace.FetchBlob("mask2"), mask))

    def test_training_gradient_and_in_place(self):
        X = np.random.randn(4, 5).astype(np.float32)
        op = core.CreateOperator(
            "Dropout", ["X"], ["Y", "mask"], ratio=0.5, device_option=seeded(3)
        )
        self.assertGradientChecks(seeded(3), op, [X], 0, [0])
        g, _ = core.GradientRegistry.GetGradientForOp(op, ["Y_grad", None])
        self.assertEqual(g[0].type, "DropoutGrad")
        self.assertEqual(list(g[0].input), ["Y_grad", "mask"])
        workspace.FeedBlob("X", X)
        workspace.RunOperatorOnce(
            core.CreateOperator("Dropout", ["X"], ["X", "m"], ratio=0.5, device_option=seeded(3))
        )
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
        self.assertRunOpRaises(
            CPU,
            op,
            [X],
            exception=RuntimeError,
            regexp=r"^\[Dropout\] training \(is_test=0\) needs the mask output, got 1 output",
        )
        op = core.CreateOperator("Dropout", ["X"], ["Y", "m"], ratio=1.0)
        self.assertRunOpRaises(
            CPU, op, [X], exception=RuntimeError, regexp=r"ratio must be in \[0, 1\), got 1"
        )
        gop = core.CreateOperator("DropoutGrad", ["dY", "m"], ["dX"])
        self.assertRunOpRaises(
            CPU,
            gop,
            [X, np.zeros(2, bool)],
            exception=RuntimeError,
            regexp=r"^\[DropoutGrad\] mask must be bool and shaped like dY \(3,\)",
        )


def run_dropout(x, outputs=("Y", "mask"), **args):
    workspace.ResetWorkspace()
    workspace.FeedBlob("X", x, gpu())
    workspace.RunOperatorOnce(
        core.CreateOperator("Dropout", ["X"], list(outputs), device_option=gpu(), **args)
    )
    return [workspace.FetchBlob(name) for name in outputs]


@needs_gpu
@pytest.mark.parametrize("ratio", [0.0, 0.2, 0.5, 0.9])
def test_dropout_mask_and_output_agree(ratio):
    x = np.random.RandomState(3).uniform(0.5, 1.5, (200, 50)).astype(np.float32)
    y, mask = run_dropout(x, ratio=ratio)
    assert mask.dtype == np.bool_ and mask.shape == x.shape
    np.testing.assert_allclose(y, x * mask / (1 - ratio), rtol=1e-6)
    # 10000 Bernoulli(1 - ratio) draws: the kept fraction is within 5 standard deviations.
    sd = np.sqrt(ratio * (1 - ratio) / x.size)
    assert abs(mask.mean() - (1 - ratio)) <= 5 * sd + 1e-9


@needs_gpu
def test_dropout_in_place():
    x = np.random.RandomState(4).uniform(0.5, 1.5, (64, 64)).astype(np.float32)
    y, mask = run_dropout(x, outputs=("X", "mask"), ratio=0.3)
    np.testing.assert_allclose(y, x * mask / 0.7, rtol=1e-6)


@needs_gpu
def test_dropout_seed_makes_the_mask_repeatable():
    x = np.ones((32, 32), np.float32)
    option = gpu()
    option.random_seed = 1234
    masks = []
    for _ in range(2):
        workspace.ResetWorkspace()
        workspace.FeedBlob("X", x, gpu())
        workspace.RunOperatorOnce(
            core.CreateOperator("Dropout", ["X"], ["Y", "mask"], ratio=0.5, device_option=option)
        )
        masks.append(workspace.FetchBlob("mask"))
    np.testing.assert_array_equal(masks[0], masks[1])


@needs_gpu
@pytest.mark.parametrize("in_place", [False, True])
def test_dropout_test_mode_is_the_identity(in_place):
    x = np.random.RandomState(5).randn(8, 9).astype(np.float32)
    out = "X" if in_place else "Y"
    check_cpu_gpu(
        core.CreateOperator("Dropout", ["X"], [out], ratio=0.5, is_test=1), [x], rtol=0, atol=0
    )
    check_cpu_gpu(
        core.CreateOperator("DropoutGrad", ["X"], [out], ratio=0.5, is_test=1), [x], rtol=0, atol=0
    )


@needs_gpu
@pytest.mark.parametrize("in_place", [False, True])
def test_dropout_grad_matches_cpu(in_place):
    rng = np.random.RandomState(6)
    dy = rng.randn(10, 11).astype(np.float32)
    mask = rng.uniform(size=(10, 11)) > 0.4
    op = core.CreateOperator("DropoutGrad", ["dY", "mask"], ["dY" if in_place else "dX"], ratio=0.4)
    check_cpu_gpu(op, [dy, mask], rtol=1e-6, atol=0)


@needs_gpu
def test_dropout_gradient_uses_the_forward_mask():
    x = np.random.RandomState(7).randn(30, 30).astype(np.float32)
    net = core.Net("dropout_grad")
    net.Proto().device_option.CopyFrom(gpu())
    y, mask = net.Dropout(["X"], ["Y", "mask"], ratio=0.25)
    grads = net.AddGradientOperators([y])
    workspace.ResetWorkspace()
    workspace.FeedBlob("X", x, gpu())
    workspace.RunNetOnce(net)
    m = workspace.FetchBlob("mask")
    dy = workspace.FetchBlob(str(grads[str(y)]))
    np.testing.assert_allclose(workspace.FetchBlob(str(grads["X"])), dy * m / 0.75, rtol=1e-6)


@needs_gpu
def test_empty_dropout():
    y, mask = run_dropout(np.zeros((0, 5), np.float32), ratio=0.5)
    assert y.shape == (0, 5) and mask.shape == (0, 5)
