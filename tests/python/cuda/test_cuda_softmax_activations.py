"""Device checks of the cuDNN Softmax (operators/nn/softmax_op_cudnn.cc) and the cuDNN-engine Relu,
Sigmoid and Tanh (operators/nn/activation_ops_cudnn.cc) and their gradients, against the CPU
kernels: axes, shapes, in-place use and float16."""
import numpy as np
import pytest

from caffe2.python import core, workspace

from cuda_test_util import check_cpu_gpu, check_gradient_cpu_gpu, gpu, gpu_semantics, needs_gpu

ACTIVATIONS = ["Relu", "Sigmoid", "Tanh"]
COVERED_OPS = (["Softmax", "Softmax_ENGINE_CUDNN", "SoftmaxGradient", "SoftmaxGradient_ENGINE_CUDNN"] +
               [a + s for a in ACTIVATIONS for s in ["_ENGINE_CUDNN", "Gradient_ENGINE_CUDNN"]])

pytestmark = needs_gpu


@pytest.mark.parametrize("engine", ["", "CUDNN"])
@pytest.mark.parametrize("shape,axis", [
    ((4, 10), 1),
    ((3, 4, 5), 1),
    ((3, 4, 5), 2),
    ((3, 4, 5), -1),
    ((2, 3, 4, 5), 0),
    ((7, 1), 1),
    ((2, 1000), 1),
])
def test_softmax_matches_cpu(engine, shape, axis):
    rng = np.random.RandomState(0)
    x = (rng.randn(*shape) * 5).astype(np.float32)
    op = core.CreateOperator("Softmax", ["X"], ["Y"], axis=axis, engine=engine)
    check_cpu_gpu(op, [x], rtol=1e-5, atol=1e-6)
    check_gradient_cpu_gpu(op, [x], rtol=1e-4, atol=1e-5)


def test_softmax_of_large_logits_is_stable():
    x = np.array([[1000.0, 1001.0, 999.0], [-1000.0, -1000.0, -1000.0]], np.float32)
    y, = check_cpu_gpu(core.CreateOperator("Softmax", ["X"], ["Y"]), [x], rtol=1e-6, atol=1e-7)
    assert np.isfinite(y).all()


@pytest.mark.parametrize("in_place", [False, True])
def test_softmax_gradient_op(in_place):
    rng = np.random.RandomState(1)
    x = rng.randn(5, 6).astype(np.float32)
    y = np.exp(x) / np.exp(x).sum(axis=1, keepdims=True)
    dy = rng.randn(5, 6).astype(np.float32)
    op = core.CreateOperator("SoftmaxGradient", ["Y", "dY"], ["dY" if in_place else "dX"], engine="CUDNN")
    check_cpu_gpu(op, [y.astype(np.float32), dy], rtol=1e-5, atol=1e-6)


def test_empty_softmax():
    check_cpu_gpu(core.CreateOperator("Softmax", ["X"], ["Y"]), [np.zeros((0, 4), np.float32)])


def activation_input(kind, shape, seed):
    x = np.random.RandomState(seed).randn(*shape).astype(np.float32)
    if kind == "Relu":
        x[np.abs(x) < 0.05] += 0.1  # away from the kink
    return x


@pytest.mark.parametrize("kind", ACTIVATIONS)
@pytest.mark.parametrize("shape", [(10,), (3, 4, 5), (2, 3, 4, 5)])
def test_activation_matches_cpu(kind, shape):
    x = activation_input(kind, shape, 2)
    op = core.CreateOperator(kind, ["X"], ["Y"], engine="CUDNN")
    check_cpu_gpu(op, [x], rtol=1e-5, atol=1e-6)
    check_gradient_cpu_gpu(op, [x], rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("kind", ACTIVATIONS)
def test_activation_in_place(kind):
    rng = np.random.RandomState(3)
    x = activation_input(kind, (4, 5), 3)
    check_cpu_gpu(core.CreateOperator(kind, ["X"], ["X"], engine="CUDNN"), [x], rtol=1e-5, atol=1e-6)
    y = rng.uniform(0.1, 0.9, (4, 5)).astype(np.float32)
    dy = rng.randn(4, 5).astype(np.float32)
    op = core.CreateOperator(kind + "Gradient", ["Y", "dY"], ["dY"], engine="CUDNN")
    check_cpu_gpu(op, [y, dy], rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("kind", ACTIVATIONS)
def test_empty_activation(kind):
    check_cpu_gpu(core.CreateOperator(kind, ["X"], ["Y"], engine="CUDNN"), [np.zeros((0, 3), np.float32)])


@gpu_semantics
@pytest.mark.parametrize("kind", ACTIVATIONS + ["Softmax"])
def test_float16(kind):
    x = activation_input(kind, (4, 6), 4).astype(np.float16)
    workspace.ResetWorkspace()
    workspace.FeedBlob("X", x.astype(np.float32))
    workspace.RunOperatorOnce(core.CreateOperator(kind, ["X"], ["Y"]))
    expected = workspace.FetchBlob("Y")
    workspace.ResetWorkspace()
    workspace.FeedBlob("X", x, gpu())
    workspace.RunOperatorOnce(core.CreateOperator(kind, ["X"], ["Y"], engine="CUDNN", device_option=gpu()))
    y = workspace.FetchBlob("Y")
    assert y.dtype == np.float16
    np.testing.assert_allclose(y.astype(np.float32), expected, rtol=2e-3, atol=2e-3)
