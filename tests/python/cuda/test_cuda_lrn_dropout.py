"""Device checks of the cuDNN LRN (operators/norm/lrn_op_cudnn.cc) against the CPU kernel, including the
arguments that run on the CPU fallback, and of the CUDA Dropout (operators/nn/dropout_op.cu): its mask
and output agree (Y = X * mask / (1 - ratio)), the kept fraction matches 1 - ratio, test mode is the
identity, and DropoutGrad matches the CPU op for a given mask."""
import numpy as np
import pytest

from caffe2.python import core, workspace

from cuda_test_util import check_cpu_gpu, check_gradient_cpu_gpu, gpu, needs_gpu

COVERED_OPS = ["LRN", "LRN_ENGINE_CUDNN", "LRNGradient", "LRNGradient_ENGINE_CUDNN", "Dropout", "DropoutGrad"]

pytestmark = needs_gpu


@pytest.mark.parametrize("engine", ["", "CUDNN"])
@pytest.mark.parametrize("shape,args", [
    ((2, 7, 4, 5), dict(size=5, alpha=0.5, beta=0.75, bias=2.0)),
    ((2, 7, 4, 5), dict(size=3, alpha=1e-4, beta=0.75, bias=1.0)),
    ((3, 16, 3), dict(size=1, alpha=0.3, beta=0.5, bias=1.0)),
    ((2, 6), dict(size=15, alpha=0.2, beta=1.0, bias=0.5)),
    ((1, 20, 2, 3, 2), dict(size=7, alpha=0.4, beta=0.6, bias=1.5)),
    # CPU fallback: NHWC, a window wider than cuDNN's 16, beta below cuDNN's minimum 0.01
    ((2, 4, 5, 7), dict(size=5, alpha=0.5, beta=0.75, bias=2.0, order="NHWC")),
    ((1, 20, 3, 3), dict(size=17, alpha=0.5, beta=0.75, bias=2.0)),
    ((2, 7, 4, 5), dict(size=3, alpha=0.5, beta=0.0, bias=1.0)),
])
def test_lrn_matches_cpu(engine, shape, args):
    x = np.random.RandomState(0).randn(*shape).astype(np.float32)
    op = core.CreateOperator("LRN", ["X"], ["Y"], engine=engine, **args)
    check_cpu_gpu(op, [x], rtol=1e-4, atol=1e-5)
    check_gradient_cpu_gpu(op, [x], rtol=1e-3, atol=1e-4)


def test_lrn_with_scale_output_runs_on_the_fallback():
    x = np.random.RandomState(1).randn(2, 7, 3, 3).astype(np.float32)
    op = core.CreateOperator("LRN", ["X"], ["Y", "scale"], size=5, alpha=0.5, beta=0.75, bias=2.0)
    check_cpu_gpu(op, [x], rtol=1e-4, atol=1e-5)


def test_lrn_gradient_op_directly():
    rng = np.random.RandomState(2)
    x = rng.randn(2, 7, 4, 5).astype(np.float32)
    args = dict(size=5, alpha=0.5, beta=0.75, bias=2.0)
    y, = check_cpu_gpu(core.CreateOperator("LRN", ["X"], ["Y"], **args), [x])
    dy = rng.randn(*x.shape).astype(np.float32)
    op = core.CreateOperator("LRNGradient", ["X", "Y", "dY"], ["dX"], engine="CUDNN", **args)
    check_cpu_gpu(op, [x, y, dy], rtol=1e-4, atol=1e-5)


def run_dropout(x, outputs=("Y", "mask"), **args):
    workspace.ResetWorkspace()
    workspace.FeedBlob("X", x, gpu())
    workspace.RunOperatorOnce(core.CreateOperator("Dropout", ["X"], list(outputs), device_option=gpu(), **args))
    return [workspace.FetchBlob(name) for name in outputs]


@pytest.mark.parametrize("ratio", [0.0, 0.2, 0.5, 0.9])
def test_dropout_mask_and_output_agree(ratio):
    x = np.random.RandomState(3).uniform(0.5, 1.5, (200, 50)).astype(np.float32)
    y, mask = run_dropout(x, ratio=ratio)
    assert mask.dtype == np.bool_ and mask.shape == x.shape
    np.testing.assert_allclose(y, x * mask / (1 - ratio), rtol=1e-6)
    # 10000 Bernoulli(1 - ratio) draws: the kept fraction is within 5 standard deviations.
    sd = np.sqrt(ratio * (1 - ratio) / x.size)
    assert abs(mask.mean() - (1 - ratio)) <= 5 * sd + 1e-9


def test_dropout_in_place():
    x = np.random.RandomState(4).uniform(0.5, 1.5, (64, 64)).astype(np.float32)
    y, mask = run_dropout(x, outputs=("X", "mask"), ratio=0.3)
    np.testing.assert_allclose(y, x * mask / 0.7, rtol=1e-6)


def test_dropout_seed_makes_the_mask_repeatable():
    x = np.ones((32, 32), np.float32)
    option = gpu()
    option.random_seed = 1234
    masks = []
    for _ in range(2):
        workspace.ResetWorkspace()
        workspace.FeedBlob("X", x, gpu())
        workspace.RunOperatorOnce(core.CreateOperator("Dropout", ["X"], ["Y", "mask"], ratio=0.5,
                                                      device_option=option))
        masks.append(workspace.FetchBlob("mask"))
    np.testing.assert_array_equal(masks[0], masks[1])


@pytest.mark.parametrize("in_place", [False, True])
def test_dropout_test_mode_is_the_identity(in_place):
    x = np.random.RandomState(5).randn(8, 9).astype(np.float32)
    out = "X" if in_place else "Y"
    check_cpu_gpu(core.CreateOperator("Dropout", ["X"], [out], ratio=0.5, is_test=1), [x], rtol=0, atol=0)
    check_cpu_gpu(core.CreateOperator("DropoutGrad", ["X"], [out], ratio=0.5, is_test=1), [x], rtol=0, atol=0)


@pytest.mark.parametrize("in_place", [False, True])
def test_dropout_grad_matches_cpu(in_place):
    rng = np.random.RandomState(6)
    dy = rng.randn(10, 11).astype(np.float32)
    mask = rng.uniform(size=(10, 11)) > 0.4
    op = core.CreateOperator("DropoutGrad", ["dY", "mask"], ["dY" if in_place else "dX"], ratio=0.4)
    check_cpu_gpu(op, [dy, mask], rtol=1e-6, atol=0)


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


def test_empty_dropout():
    y, mask = run_dropout(np.zeros((0, 5), np.float32), ratio=0.5)
    assert y.shape == (0, 5) and mask.shape == (0, 5)
